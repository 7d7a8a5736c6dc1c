#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/duration.h"
#include "wire/heartbeat.h"

namespace tandem::election {

using Time = std::chrono::steady_clock::time_point;

// The role a node shows its peers is wire::Role. The internal roles fold into it: FENCING shows
// as BACKUP, TAKING_OVER as ACTIVE, RELEASING as BACKUP with resources_held (it still holds
// them but no longer contends for them). What one heartbeat says is wire::Heartbeat, after the
// wire layer has checked its signature and freshness.
using wire::Heartbeat;

// What this node knows of one configured peer.
struct PeerState {
  std::string name;
  int configured_priority = 100;
  std::optional<Heartbeat> last;  // the newest heartbeat, if any ever arrived
  Time last_heard{};
  bool alive = false;
  std::optional<Time> daemon_left_at;  // its tandemd left the group; its node did not
  std::optional<Time> backup_since;    // continuously BACKUP since, as seen here
  // Its health last crossed kHealthNoRealServer (or was first heard) at, as seen here.
  std::optional<Time> health_side_since;

  // It is, or is becoming, the ACTIVE: a contender for keeping the resources.
  bool isActive() const { return alive && last && last->role == wire::Role::kActive; }
  // It may have resources in the kernel: nobody else may start them until it releases.
  bool holds() const {
    return alive && last && (last->role == wire::Role::kActive || last->resources_held);
  }
};

}  // namespace tandem::election
