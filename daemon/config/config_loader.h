#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "config/config.h"
#include "config/diagnostics.h"
#include "config/file_system.h"

namespace tandem::config {

inline constexpr std::string_view kDefaultConfigPath = "/etc/tandem/tandem.conf";
inline constexpr size_t kMaxConfigBytes = 1 << 20;

struct LoadResult {
  std::optional<Config> config;  // set only when there is no error
  Diagnostics diagnostics;
  std::set<std::string> known_keys;  // every "table.key" the loader understands and asked for
  std::string text;                  // what was parsed, as read (for `tandem config show`)

  bool ok() const { return config.has_value(); }
};

// Parses and validates a config given as text. source names the file in messages and is the
// base for relative key file paths. files answers the key file checks.
LoadResult loadConfigText(std::string_view text, const std::string& source,
                          const FileSystem& files);

// Reads path (at most kMaxConfigBytes) and loads it.
LoadResult loadConfigFile(const std::string& path, const FileSystem& files);

}  // namespace tandem::config
