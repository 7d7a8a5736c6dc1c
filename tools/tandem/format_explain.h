#pragma once

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "format_status.h"

// `tandem explain`: tandemd's explain answer (protocol.h) in words. Pure, golden-tested
// against whole directors (test/cli/golden/explain).
namespace tandem::cli {

CommandOutput renderExplain(const Result<nlohmann::json>& answer, bool json);

}  // namespace tandem::cli
