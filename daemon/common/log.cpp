#include "common/log.h"

#include <array>
#include <utility>

namespace tandem {

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

std::string kv(std::string_view key, std::string_view value) {
  bool plain = !value.empty() && value.find_first_of(" \t\"=") == std::string_view::npos;
  std::string out(key);
  out += '=';
  if (plain) return out.append(value);
  out += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out += '"';
}

std::string kv(std::string_view key, uint64_t value) { return kv(key, std::to_string(value)); }

}  // namespace tandem
