#include "cluster/frame_apply.h"

#include <variant>

namespace tandem::cluster {

election::Actions applyMessage(election::ClusterCore& core, election::Time now,
                               const wire::Message& m) {
  if (const auto* hb = std::get_if<wire::Heartbeat>(&m.body)) {
    wire::Heartbeat from = *hb;
    from.sender = m.frame.sender;
    from.incarnation = m.frame.incarnation;
    return core.onHeartbeat(now, from);
  }
  if (const auto* rel = std::get_if<wire::Release>(&m.body)) {
    if (rel->kind == wire::ReleaseKind::kReleased) {
      return core.onRelease(now, m.frame.sender, rel->epoch);
    }
  }
  return {};
}

}  // namespace tandem::cluster
