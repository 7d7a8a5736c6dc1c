#pragma once

#include <optional>
#include <string>

#include "common/result.h"

namespace tandem {

// Reads fd to its end (a read cut by a signal is retried) and closes it. The bytes; nullopt when
// there are more than max_bytes (the caller says what the limit is for); or the failed read as
// an error naming path.
[[nodiscard]] Result<std::optional<std::string>> readAllAtMost(int fd, const std::string& path,
                                                               size_t max_bytes);

}  // namespace tandem
