#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/duration.h"

namespace tandem::election {

using Time = std::chrono::steady_clock::time_point;

// The role a node shows its peers. The internal roles fold into these: FENCING shows as
// BACKUP, TAKING_OVER as ACTIVE, RELEASING as BACKUP with resources_held (it still holds them
// but no longer contends for them).
enum class WireRole : uint8_t { kInit = 0, kBackup = 1, kActive = 2, kStandby = 3, kFault = 4 };

std::string_view wireRoleName(WireRole r);

// What one heartbeat says, after the wire layer has checked its signature and freshness.
struct Heartbeat {
  std::string sender;
  uint64_t incarnation = 0;
  WireRole role = WireRole::kInit;
  int priority = 100;
  int health = 1000;  // per-mille
  bool standby = false;
  bool quorate = true;
  bool tiebreaker_ok = true;
  bool resources_held = false;
  std::string active_view;  // who the sender thinks is ACTIVE; empty: nobody
  uint64_t epoch = 0;       // bumped by each takeover; stale views lose to newer ones
  Millis interval{200};
  std::string move_target;  // an operator's move, cluster wide; empty: none
  uint64_t move_generation = 0;
};

// What this node knows of one configured peer.
struct PeerState {
  std::string name;
  int configured_priority = 100;
  std::optional<Heartbeat> last;  // the newest heartbeat, if any ever arrived
  Time last_heard{};
  bool alive = false;
  std::optional<Time> daemon_left_at;  // its tandemd left the group; its node did not
  std::optional<Time> backup_since;    // continuously BACKUP since, as seen here

  // It is, or is becoming, the ACTIVE: a contender for keeping the resources.
  bool isActive() const { return alive && last && last->role == WireRole::kActive; }
  // It may have resources in the kernel: nobody else may start them until it releases.
  bool holds() const {
    return alive && last && (last->role == WireRole::kActive || last->resources_held);
  }
};

}  // namespace tandem::election
