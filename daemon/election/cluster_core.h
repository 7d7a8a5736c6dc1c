#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/sync_report.h"
#include "election/election.h"
#include "election/peer_state.h"
#include "election/role_machine.h"

namespace tandem::election {

struct CoreConfig {
  std::string self;
  int priority = 100;
  std::map<std::string, int> peers;  // name -> configured priority
  Millis heartbeat_interval{200};
  Millis dead_time{1000};
  Policy policy;
  bool fencing = false;  // a fence command is configured
  // no_quorum_policy = "ignore": quorum counts as held whatever votequorum says or does not say.
  bool ignore_quorum = false;
  // How long votequorum's last answer stands once its connection is lost: a corosync restart
  // (about 4 s) changes nothing, a corosync that stays away makes the quorum unknown.
  Millis quorum_hold{8000};
};

// What the shell must do. Returned in order; the shell carries them out and reports results
// back (onResourcesStarted, onFenceResult, ...).
struct Action {
  enum class Kind {
    kStartResources,
    kStopResources,
    kRunFence,  // text: the peer to fence
    kCancelFence,
    kSendHeartbeat,
    kSendRelease,  // text: the node we released to ("" when none in particular)
    kReannounce,   // we stay ACTIVE after a conflict: announce the resources again
    kPersistRole,  // text: the role name to keep under /run for a restart
    // text: "on GENERATION" or "off GENERATION", to keep under /run for a restart
    kPersistMaintenance,
    kLog,    // text: one line, key=value context
    kAlarm,  // text: what an operator must look at
    // change: a role change, told before the resources of the transition are started or
    // stopped (a takeover's TAKING_OVER comes before its VIPs are added)
    kRoleChanged,
  };
  Kind kind;
  std::string text;
  std::optional<RoleChange> change{};  // kRoleChanged only
  bool operator==(const Action&) const = default;
};
using Actions = std::vector<Action>;

std::string_view actionKindName(Action::Kind k);

// What a restarted daemon finds: its last role (kept under /run) and whether its resources
// (the VIPs) are still on its interfaces.
struct Startup {
  bool was_active = false;
  bool resources_present = false;
  uint64_t epoch = 0;
  // The maintenance mode this node last knew, and the generation that set it.
  bool maintenance = false;
  uint64_t maintenance_generation = 0;
};

struct NodeView {
  std::string name;
  std::string role;  // the internal role for self, the wire role for peers, "LOST", "UNKNOWN"
  int priority = 0;
  int health = 0;
  bool standby = false;
  std::optional<int64_t> last_heartbeat_ms;  // ago; nullopt for self and never-heard peers
  uint64_t connections = 0;                  // its IPVS connection table, as reported
  int64_t sync_backup_ms = 0;                // its sync backup daemon has run for (0: none)
  uint64_t templates = 0;                    // its persistence templates, as reported
  std::optional<int64_t> sync_heard_ms;      // its backup last heard a sync message, ago
};

struct CoreStatus {
  std::string local_node;
  std::string role;
  std::optional<std::string> active;
  std::optional<bool> quorate;  // unknown until votequorum has answered
  // quorate is the last answer, held since votequorum's connection was lost this long ago.
  std::optional<int64_t> quorum_held_ms;
  uint64_t epoch = 0;
  std::string move_target;
  std::vector<NodeView> nodes;
  // A failback held back for connection sync: what it waits for ("" when none is).
  std::string failback_waiting;
  // Maintenance mode, cluster wide: no node starts or stops resources.
  bool maintenance = false;
  // What the operator's limits have left: this node's standby, the move in force.
  std::optional<int64_t> standby_left_ms;
  std::optional<int64_t> move_left_ms;
};

// The whole cluster decision logic of one node: heartbeats, timers and admin requests in,
// actions out. Pure: it never reads a clock (every input carries `now`), opens nothing and
// holds no global state, so a test can run three of them on simulated time.
class ClusterCore {
 public:
  ClusterCore(CoreConfig config, Time now, Startup startup);

  Actions onHeartbeat(Time now, const Heartbeat& hb);
  // A peer's "released" frame, sent in its election epoch: one from an epoch older than the
  // peer's heartbeats already carry is stale (a late copy of an earlier handover) and ignored.
  Actions onRelease(Time now, const std::string& from, uint64_t epoch);
  Actions onDaemonLeft(Time now, const std::string& peer);  // its tandemd left the CPG group
  Actions onNodeLeft(Time now, const std::string& peer);    // corosync dropped its node
  Actions onTick(Time now);
  // votequorum's answer. Until the first one, quorum is unknown, and an unknown quorum is no
  // quorum: a node that cannot reach votequorum never becomes ACTIVE on an assumption.
  Actions onQuorum(Time now, bool quorate);
  // The votequorum connection went away. Its last answer stands for quorum_hold, so that a
  // corosync restart causes no role change; then the quorum is unknown until it answers again.
  Actions onQuorumLost(Time now);
  Actions onLocalHealth(Time now, int health, bool tiebreaker_ok);
  // Connection sync on this node: its connection table's entries, and whether its sync backup
  // daemon runs (what a sync-aware failback waits for), its templates and when its backup last
  // heard the master (shown per node); all sent in every heartbeat.
  Actions onSyncState(Time now, const SyncReport& sync);
  // An operator's standby of this node; with a lifetime, it ends by itself that much later.
  Actions onStandby(Time now, bool standby, std::optional<Millis> lifetime = std::nullopt);
  // An operator's move (target empty: clear it). generation orders concurrent requests; the
  // shell passes the wall clock in ms. With a lifetime the move ends by itself on every node
  // (each heartbeat carries what is left of it); the election then decides as without it.
  // A move whose target is not ACTIVE within moveTimeout() failed: every node drops it, so
  // that no constraint is left to pull the services there later, unasked.
  Actions onMove(Time now, const std::string& target, uint64_t generation,
                 std::optional<Millis> lifetime = std::nullopt);
  // Maintenance mode, cluster wide and ordered by generation like a move: while it is on, no
  // node starts or stops a resource (no takeover, release, standby or failback; a clean stop
  // leaves them where they are, a restart resumes them) and every node keeps monitoring and
  // heartbeating. What the nodes hold when it ends, the election then sorts out.
  Actions onMaintenance(Time now, bool on, uint64_t generation);
  Actions onResourcesStarted(Time now);
  Actions onResourcesStopped(Time now);
  Actions onResourceFailed(Time now, const std::string& what);
  Actions onFenceResult(Time now, bool ok, const std::string& detail);
  // Lets the node take part again after a resource failure or a failed fence.
  Actions onClearFailures(Time now);
  // A reload: this node's priority, the peers and theirs, the timers, the failback policy and
  // fencing. A peer that stays keeps what was heard of it, a new one starts unheard, a removed
  // one is forgotten (and no longer counts as a holder). config.self must not change.
  Actions onReconfigure(Time now, CoreConfig config);

  Role role() const { return role_; }
  // How long a move's target has to become ACTIVE: four dead times, at least 10 s.
  Millis moveTimeout() const { return std::max(Millis(10000), 4 * config_.dead_time); }
  bool maintenance() const { return maintenance_; }
  // Why the last role change happened ("failback to the preferred node (winner lb1)").
  const std::string& lastReason() const { return last_reason_; }
  // This node's role changes since it started, by the event that made each (RoleEvent order).
  const std::array<uint64_t, kRoleEventCount>& roleChanges() const { return role_changes_; }
  // Takeovers completed since it started: TAKING_OVER to ACTIVE after an election (a restart
  // that resumes what it held is not one), and how long the last one took.
  uint64_t takeovers() const { return takeovers_; }
  std::optional<Millis> lastTakeover() const { return last_takeover_; }
  Heartbeat heartbeat() const;               // what to send now
  std::optional<Time> nextDeadline() const;  // when onTick must run next
  CoreStatus status(Time now) const;

  // `tandem explain`: why the ACTIVE is active and what would happen if it failed now, from
  // what this node knows. Asks the same election the node runs; changes nothing.
  struct CandidateView {
    std::string name;
    bool eligible = false;
    std::string why_not;  // "" when eligible
  };
  struct Explanation {
    std::optional<std::string> active;
    std::string why_active;  // the election's reason, or why nobody holds the services
    std::vector<CandidateView> candidates;
    std::optional<std::string> successor;  // who takes over if the ACTIVE fails now
    std::string if_active_fails;           // a sentence
  };
  Explanation explain(Time now) const;

 private:
  void expirePeers(Time now, Actions& out);
  void expireQuorumHold(Time now, Actions& out);
  void expireLifetimes(Time now, Actions& out);
  void adoptMaintenance(bool on, uint64_t generation, const std::string& from, Actions& out);
  bool quorumHeld() const { return quorum_lost_at_.has_value() && quorate_.has_value(); }
  void markLost(PeerState& p, const std::string& why, Actions& out);
  void evaluate(Time now, Actions& out);
  std::optional<RoleEvent> nextEvent(Time now);
  void apply(Time now, RoleEvent ev, Actions& out);
  Candidate selfCandidate(Time now) const;
  // Self and every live peer heard, as the election sees them.
  std::vector<Candidate> candidates(Time now) const;
  std::optional<std::string> moveView() const;
  bool selfFit() const;
  // Quorum as the election counts it: votequorum's answer (none yet: no quorum), or always
  // held under no_quorum_policy = "ignore".
  bool quorumOk() const { return config_.ignore_quorum || quorate_.value_or(false); }
  bool someoneElseHolds() const;
  bool settling(Time now) const;
  std::optional<std::string> activeView() const;
  wire::Role wireRole() const;
  Actions finish(Time now, Actions out);

  CoreConfig config_;
  Role role_ = Role::kInit;
  std::array<uint64_t, kRoleEventCount> role_changes_{};
  uint64_t takeovers_ = 0;
  std::optional<Millis> last_takeover_;
  std::optional<Time> taking_over_at_;  // when the current TAKING_OVER began
  bool resuming_ = false;               // it began out of INIT: a restart's resume
  Time init_deadline_;
  Time init_quorum_deadline_;  // how long a restarted ACTIVE waits for votequorum's answer
  Startup startup_;
  uint64_t epoch_ = 0;
  int health_ = 1000;
  bool tiebreaker_ok_ = true;
  std::optional<bool> quorate_;  // unknown until onQuorum
  // votequorum's connection was lost at (cleared by its next answer): quorate_ is held until
  // quorum_hold after it, then reset.
  std::optional<Time> quorum_lost_at_;
  // What a votequorum that came back within the hold has said since ("not quorate" only: a
  // quorate answer ends the hold); it becomes the verdict when the hold runs out.
  std::optional<bool> quorum_after_hold_;
  bool standby_ = false;
  std::optional<Time> standby_until_;  // an operator's standby with a lifetime ends at
  bool maintenance_ = false;
  uint64_t maintenance_generation_ = 0;
  bool resource_fault_ = false;
  bool fence_blocked_ = false;
  std::optional<Time> backup_since_;
  Time health_side_since_;  // health_ last crossed kHealthNoRealServer at
  uint64_t connections_ = 0;
  uint64_t templates_ = 0;
  std::optional<Time> sync_backup_since_;  // the sync backup daemon runs since
  std::optional<Time> sync_heard_at_;      // its backup daemon last heard a sync message at
  std::string failback_waiting_;           // the last election's Decision::waiting
  bool logged_waiting_ = false;            // "holds back a failback" said, its end not yet
  std::string move_target_;
  uint64_t move_generation_ = 0;
  std::optional<Time> move_until_;  // a move with a lifetime ends at
  std::optional<Time> move_due_;    // the move's target must be ACTIVE by then, or it failed
  // A holder that vanished without releasing: a takeover from it needs the fence first.
  std::optional<std::string> lost_holder_;
  std::map<std::string, PeerState> peers_;
  std::string last_reason_;
  Time now_hint_{};  // the latest `now` seen, so nextDeadline() skips deadlines in the past
};

}  // namespace tandem::election
