#include "platform/logger.h"

#include <array>
#include <utility>

namespace tandem::platform {

namespace {

constexpr std::array<std::pair<std::string_view, LogLevel>, 5> kLevels = {{
    {"error", LogLevel::kError},
    {"warning", LogLevel::kWarning},
    {"notice", LogLevel::kNotice},
    {"info", LogLevel::kInfo},
    {"debug", LogLevel::kDebug},
}};

}  // namespace

std::optional<LogLevel> parseLogLevel(std::string_view name) {
  for (const auto& [n, level] : kLevels) {
    if (n == name) return level;
  }
  return std::nullopt;
}

std::string_view logLevelName(LogLevel level) {
  for (const auto& [n, l] : kLevels) {
    if (l == level) return n;
  }
  return "?";
}

}  // namespace tandem::platform
