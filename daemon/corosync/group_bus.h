#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/duration.h"
#include "common/error.h"
#include "common/result.h"

// What the daemon sees of group messaging: a closed process group on the local node's cluster
// engine, with ordered delivery and membership. Production runs it on corosync CPG
// (cpg_bus.h); tests on a fake. No corosync type crosses this header.
namespace tandem::corosync {

// A group member is a process, not a node: one node can host several (a restarted daemon
// rejoins under a new pid before its old incarnation's departure is known everywhere).
struct GroupMember {
  uint32_t nodeid = 0;
  uint32_t pid = 0;
  auto operator<=>(const GroupMember&) const = default;
};

// Why a member joined or left, as the cluster engine reports it.
enum class ChangeReason {
  kJoin,         // the process joined the group
  kLeave,        // the process left the group or closed its connection
  kProcessDown,  // the process died (its connection to the local engine closed)
  kNodeUp,       // its node joined the membership with the process already in the group
  kNodeDown,     // its node left the membership (dead, partitioned or engine stopped)
  kUnknown,
};

std::string_view changeReasonName(ChangeReason reason);

// What a departure says about the departed member's node. The distinction matters to an HA
// daemon: if only the daemon went, its node is still in the ring and may still hold addresses,
// so a takeover must wait for (or force) the release; if the whole node went, the ring has
// already excluded it.
enum class Departure {
  kDaemonOnly,  // the daemon left or crashed; its node stays in the membership
  kWholeNode,   // the node left the membership
  kUnknown,
};

Departure departureOf(ChangeReason reason);
std::string_view departureName(Departure departure);

struct MemberChange {
  GroupMember member;
  ChangeReason reason = ChangeReason::kUnknown;
};

struct GroupChange {
  std::vector<GroupMember> members;  // the whole group after the change, this daemon included
  std::vector<MemberChange> joined;
  std::vector<MemberChange> left;
  // The first view after (re)connecting. Departures that happened while disconnected are not
  // reported one by one, so the receiver replaces its view with `members` instead of patching.
  bool first_since_connect = false;
};

// The totem ring: the nodes whose engines are in one membership, whether or not a daemon of
// the group runs on them.
struct RingMembership {
  uint32_t ring_nodeid = 0;  // the ring id is (representative nodeid, sequence)
  uint64_t ring_seq = 0;
  std::vector<uint32_t> nodeids;
};

// Callbacks arrive on the dispatcher, one at a time. They may call send(); they must not
// destroy the bus.
class GroupBusListener {
 public:
  virtual ~GroupBusListener() = default;

  // Delivered in the same total order to every member, the sender included.
  virtual void onMessage(uint32_t nodeid, uint32_t pid, std::span<const uint8_t> bytes) = 0;
  virtual void onGroupChange(const GroupChange& change) = 0;
  virtual void onMembership(const RingMembership& ring) = 0;
  // Joined (again); the group view follows in onGroupChange with first_since_connect set.
  virtual void onConnected() = 0;
  // The local engine went away. Queued messages were meant for a view that no longer exists,
  // so they are discarded and counted here rather than sent late. The bus reconnects by itself.
  virtual void onConnectionLost(const Error& cause, size_t discarded_messages) = 0;
  // A (re)connection attempt failed; the next one follows after retry_in. For logging.
  virtual void onConnectFailed(const Error& /*cause*/, Millis /*retry_in*/) {}
};

class GroupBus {
 public:
  virtual ~GroupBus() = default;

  // Multicasts to the group in total order. Never blocks: while the engine applies flow
  // control the message is queued (in order) and sent when it is accepted. Fails, and keeps
  // nothing, when disconnected (kUnavailable), when the queue is full (kTryAgain) or when the
  // engine refuses the message itself (e.g. kInvalidArgument for one that is too big).
  [[nodiscard]] virtual Result<void> send(std::span<const uint8_t> bytes) = 0;

  [[nodiscard]] virtual bool connected() const = 0;
  // Known from the first successful connection on; a node's id does not change while it runs.
  [[nodiscard]] virtual std::optional<uint32_t> localNodeId() const = 0;
  [[nodiscard]] virtual size_t queuedMessages() const = 0;
  // Dispatches, without blocking, what corosync has already delivered to this member but the
  // loop has not read yet (see FrameLink::drain). Nothing while disconnected.
  virtual void drain() = 0;
};

}  // namespace tandem::corosync
