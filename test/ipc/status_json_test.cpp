// The status document built from the election core's view.
#include "ipc/status_json.h"

#include <gtest/gtest.h>

namespace tandem::ipc {
namespace {

using nlohmann::json;

TEST(StatusJsonTest, CoreStatusBecomesTheDocumentedSchema) {
  election::CoreStatus s;
  s.local_node = "lb1";
  s.role = "ACTIVE";
  s.active = "lb1";
  s.quorate = true;
  s.quorum_held_ms = 2100;
  s.epoch = 7;
  s.failback_waiting = "failback to lb2 waits for its sync backup daemon to run";
  s.nodes = {{"lb1", "ACTIVE", 150, 1000, false, std::nullopt, 420, 60000, 12, std::nullopt},
             {"lb2", "BACKUP", 100, 950, true, 180, 0, 0, 0, 450}};
  s.maintenance = true;
  s.move_left_ms = 90000;
  FrameStats frames{1234, {{"bad_signature", 3}, {"replayed", 0}}};
  json doc = statusJson("prod", s, frames);
  EXPECT_EQ(doc, json::parse(R"({
    "cluster": "prod", "local_node": "lb1", "role": "ACTIVE", "active": "lb1",
    "quorate": true, "quorum_held_ms": 2100, "epoch": 7, "move_target": "",
    "failback_waiting": "failback to lb2 waits for its sync backup daemon to run",
    "maintenance": true, "standby_left_ms": null, "move_left_ms": 90000,
    "nodes": [
      {"name": "lb1", "role": "ACTIVE", "priority": 150, "health": 1000, "standby": false,
       "last_heartbeat_ms": null, "connections": 420, "sync_backup_ms": 60000,
       "templates": 12, "sync_heard_ms": null},
      {"name": "lb2", "role": "BACKUP", "priority": 100, "health": 950, "standby": true,
       "last_heartbeat_ms": 180, "connections": 0, "sync_backup_ms": 0,
       "templates": 0, "sync_heard_ms": 450}],
    "accepted_frames": 1234,
    "rejected_frames": {"bad_signature": 3, "replayed": 0}})"));
}

TEST(StatusJsonTest, NoActiveIsNull) {
  election::CoreStatus s;
  s.local_node = "lb1";
  EXPECT_TRUE(statusJson("prod", s, {})["active"].is_null());
  EXPECT_TRUE(statusJson("prod", s, {})["quorum_held_ms"].is_null()) << "not held";
  EXPECT_TRUE(statusJson("prod", s, {})["rejected_frames"].is_object());
}

}  // namespace
}  // namespace tandem::ipc
