#include "core/subsystem.h"

#include <algorithm>

namespace tandem::resources {

std::string_view stageName(Stage stage) {
  switch (stage) {
    case Stage::kState:
      return "state";
    case Stage::kSync:
      return "sync";
    case Stage::kIpvs:
      return "ipvs";
    case Stage::kVips:
      return "vips";
    case Stage::kAnnounce:
      return "announce";
  }
  return "?";
}

std::vector<std::shared_ptr<Resource>> inTakeoverOrder(std::vector<HeldResource> held) {
  std::stable_sort(held.begin(), held.end(), [](const HeldResource& a, const HeldResource& b) {
    return static_cast<int>(a.stage) < static_cast<int>(b.stage);
  });
  std::vector<std::shared_ptr<Resource>> out;
  out.reserve(held.size());
  for (auto& h : held) out.push_back(std::move(h.resource));
  return out;
}

}  // namespace tandem::resources
