#include "config/config.h"

namespace tandem::config {

const Node* Config::findNode(std::string_view name) const {
  for (const auto& n : nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

}  // namespace tandem::config
