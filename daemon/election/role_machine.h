#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The local node's role as a table-driven state machine. It knows nothing of peers, time or
// sockets: ClusterCore (cluster_core.h) turns heartbeats, timers and admin requests into the
// events below and carries out the actions that come back.
namespace tandem::election {

enum class Role : uint8_t {
  kInit,        // just started: listening for peers before deciding anything
  kBackup,      // ready, not active
  kFencing,     // elected over a lost peer; waiting for the fence command
  kTakingOver,  // elected; starting resources in order
  kActive,      // holds every resource
  kReleasing,   // stopping resources in reverse order
  kStandby,     // put aside by the operator
  kFault,       // not fit to be active (health, quorum, tiebreaker, resource failure)
};
inline constexpr size_t kRoleCount = 8;

enum class RoleEvent : uint8_t {
  kInitDone,  // startup finished with nothing held
  // startup found what we held (all of it or a part: a VIP flushed meanwhile, or a reboot that
  // kept only the state files) and nobody else active: start the resources again, adopting
  // those in place, so that the node is ACTIVE only once it holds every VIP and announced it
  kResumeActive,
  // as kResumeActive, but in maintenance mode: nothing is started or stopped, the node takes
  // up ACTIVE with what it finds
  kResumeHeld,
  kReleaseOrphans,     // startup found resources held while someone else is active
  kElected,            // the election picks us and nobody else holds resources
  kElectedNeedsFence,  // as kElected, but over a peer that was lost rather than released
  kNotElected,         // the election picks someone else
  kFenceDone,
  kFenceFailed,
  kResourcesStarted,
  kResourcesStopped,
  kResourceFailed,  // a start, stop or monitor failed
  kStandbyOn,
  kStandbyOff,
  kHealthLost,
  kHealthBack,
};
inline constexpr size_t kRoleEventCount = 16;

enum class RoleAction : uint8_t {
  kStartResources,
  kStopResources,
  kRunFence,
  kCancelFence,
  kAnnounce,     // send a heartbeat now: our role changed
  kSendRelease,  // tell the peers we released (a planned handover's confirmation)
  kAlarm,        // something an operator must look at
};

struct Transition {
  Role next;
  std::vector<RoleAction> actions;
};

std::string_view roleName(Role r);
std::string_view roleEventName(RoleEvent e);
std::string_view roleActionName(RoleAction a);

// One role change as the cluster core made it: what caused it, why in words, and the epoch it
// happened in. Told to whoever acts on each change (the notify hooks), in order.
struct RoleChange {
  Role from = Role::kInit;
  Role to = Role::kInit;
  RoleEvent event = RoleEvent::kInitDone;
  std::string reason;  // "failback to the preferred node (winner lb1)"
  uint64_t epoch = 0;
  bool operator==(const RoleChange&) const = default;
};

// The transition for (role, event), or nullopt when the event means nothing in that role and
// is ignored. Pure: the whole table is in role_machine.cpp and tested pair by pair.
std::optional<Transition> step(Role role, RoleEvent event);

// Roles in which the node holds (or may hold) its resources.
bool holdsResources(Role r);

}  // namespace tandem::election
