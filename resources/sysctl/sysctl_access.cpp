#include "sysctl/sysctl_access.h"

#include <algorithm>

namespace tandem::resources::sysctl {

std::string sysctlKey(const std::vector<std::string_view>& parts) {
  std::string out;
  for (std::string_view p : parts) {
    if (!out.empty()) out += '.';
    std::string part(p);
    std::replace(part.begin(), part.end(), '.', '/');
    out += part;
  }
  return out;
}

std::string procPath(std::string_view key) {
  std::string out(key);
  // Swap the two separators: dots between parts become slashes, slashes inside a part (an
  // interface name's dots) become dots again.
  for (char& c : out) {
    if (c == '.') {
      c = '/';
    } else if (c == '/') {
      c = '.';
    }
  }
  return out;
}

}  // namespace tandem::resources::sysctl
