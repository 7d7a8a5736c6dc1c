#include "common/duration.h"

#include <cstdint>

namespace tandem {

namespace {
constexpr int64_t kMaxMillis = int64_t{1} << 31;  // what a timer in milliseconds can hold
}

std::optional<Millis> parseDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    int64_t n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      n = n * 10 + (text[i] - '0');
      if (n > kMaxMillis) return std::nullopt;
      ++i;
    }
    size_t unit_start = i;
    while (i < text.size() && text[i] >= 'a' && text[i] <= 'z') ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    int64_t scale = 0;
    if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1000;
    else if (unit == "m")
      scale = 60 * 1000;
    else if (unit == "h")
      scale = 3600 * 1000;
    else
      return std::nullopt;
    total += n * scale;
    if (total > kMaxMillis) return std::nullopt;
  }
  return Millis(total);
}

bool isDurationSyntax(std::string_view text) {
  if (text.empty()) return false;
  size_t i = 0;
  while (i < text.size()) {
    size_t digits = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == digits) return false;
    size_t unit_start = i;
    while (i < text.size() && text[i] >= 'a' && text[i] <= 'z') ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    if (unit != "ms" && unit != "s" && unit != "m" && unit != "h") return false;
  }
  return true;
}

std::string formatDuration(Millis d) {
  int64_t ms = d.count();
  if (ms != 0 && ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
  if (ms != 0 && ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace tandem
