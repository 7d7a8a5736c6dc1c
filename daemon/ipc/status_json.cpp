#include "ipc/status_json.h"

namespace tandem::ipc {

nlohmann::json statusJson(const std::string& cluster, const election::CoreStatus& status,
                          const FrameStats& frames) {
  using nlohmann::json;
  json nodes = json::array();
  for (const auto& n : status.nodes) {
    nodes.push_back(
        {{"name", n.name},
         {"role", n.role},
         {"priority", n.priority},
         {"health", n.health},
         {"standby", n.standby},
         {"last_heartbeat_ms", n.last_heartbeat_ms ? json(*n.last_heartbeat_ms) : json(nullptr)},
         {"connections", n.connections},
         {"sync_backup_ms", n.sync_backup_ms},
         {"templates", n.templates},
         {"sync_heard_ms", n.sync_heard_ms ? json(*n.sync_heard_ms) : json(nullptr)}});
  }
  json rejected = json::object();
  for (const auto& [reason, count] : frames.rejected) rejected[reason] = count;
  json held = status.quorum_held_ms ? json(*status.quorum_held_ms) : json(nullptr);
  return json{{"cluster", cluster},
              {"local_node", status.local_node},
              {"role", status.role},
              {"active", status.active ? json(*status.active) : json(nullptr)},
              {"quorate", status.quorate ? json(*status.quorate) : json(nullptr)},
              {"quorum_held_ms", std::move(held)},
              {"epoch", status.epoch},
              {"move_target", status.move_target},
              {"failback_waiting", status.failback_waiting},
              {"maintenance", status.maintenance},
              {"standby_left_ms", status.standby_left_ms ? json(*status.standby_left_ms) : json()},
              {"move_left_ms", status.move_left_ms ? json(*status.move_left_ms) : json()},
              {"nodes", std::move(nodes)},
              {"accepted_frames", frames.accepted},
              {"rejected_frames", std::move(rejected)}};
}

}  // namespace tandem::ipc
