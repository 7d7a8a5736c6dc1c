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

}  // namespace tandem::resources::health
