#include "health/reasons.h"

#include <cctype>
#include <cstring>

namespace tandem::resources::health {

std::string errnoReason(int err) {
  std::string s = std::strerror(err);
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

std::string timedOutReason(Millis timeout) {
  return "timed out after " + std::to_string(timeout.count()) + " ms";
}

std::string quotedPrefix(std::string_view bytes, size_t max) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < bytes.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += static_cast<char>(c);
        } else {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        }
    }
  }
  out += '"';
  if (bytes.size() > max) out += "...";
  return out;
}

}  // namespace tandem::resources::health
