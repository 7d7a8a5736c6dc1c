#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/duration.h"
#include "config/config.h"

// Who should be ACTIVE, given what this node sees. Pure and deterministic: every node that sees
// the same candidates reaches the same answer, which is what makes the cluster agree without a
// vote round.
namespace tandem::election {

// The health of a node whose checks find none of its real servers up. Still eligible (the VIPs
// keep serving the fallback server, and a pair that sees none at all keeps one ACTIVE), but it
// neither wins nor keeps the resources against a node that sees some.
inline constexpr int kHealthNoRealServer = 1;

struct Candidate {
  std::string name;
  int priority = 100;
  int health = 1000;  // per-mille of healthy real servers; 0 while an interface or ping is lost
  bool standby = false;
  bool quorate = true;
  bool tiebreaker_ok = true;
  bool fault = false;          // the node says it is in FAULT
  bool claims_active = false;  // the node holds (or is taking or releasing) the resources
  Millis backup_for{0};        // how long it has been BACKUP without a break, as seen here
  // How long its health has stayed on the same side of kHealthNoRealServer (at or above the
  // floor), as seen here.
  Millis health_steady_for{0};
  // Connection sync, as the node reports it: its connection table's entries, and how long its
  // sync backup daemon has run without a break (0: none runs).
  uint64_t connections = 0;
  Millis sync_backup_for{0};
};

struct Policy {
  config::FailbackPolicy failback = config::FailbackPolicy::kManual;
  Millis failback_delay{0};
  // How long a holder at kHealthNoRealServer and a node above it must both have stayed so before
  // the holder gives way: each director runs its own checks, out of phase, so a real-server
  // change that every director sees reaches them up to one check period apart. 0: at once.
  Millis health_settle{0};
  // Sync-aware failback ([sync] enabled): a preferred node takes over from the holder only
  // when its backup sync daemon has run for sync_settle and its connection table holds
  // sync_min_share of the holder's; after sync_max_wait more it goes ahead anyway.
  bool sync_aware = false;
  Millis sync_settle{0};
  double sync_min_share = 0;
  Millis sync_max_wait{0};
};

// The health_settle for a config: the longest check period (interval + timeout) of any checked
// real server, plus one heartbeat_interval for the news to travel; 0 when nothing is checked.
Millis healthSettle(const config::Config& cfg);

struct Decision {
  std::optional<std::string> winner;  // nullopt: nobody may be active
  std::string reason;                 // for the log line of a role change
  // A failback held back for connection sync: what it waits for ("" when none is).
  std::string waiting;
};

// Whether a returning node's connection table has caught up with the holder's (policy's
// sync_settle and sync_min_share); when not, what it still waits for.
std::optional<std::string> syncWait(const Candidate& returning, const Candidate& holder,
                                    const Policy& policy);

// May the node be ACTIVE at all?
bool eligible(const Candidate& c);
// Why not, in a few words ("in standby", "health 0", ...); "" for an eligible node.
std::string ineligibleWhy(const Candidate& c);

// The rank order that breaks ties: not standby, then health, then priority, then the node
// name (the smaller wins; names are the node identity every config shares).
bool outranks(const Candidate& a, const Candidate& b);

// The rules, in order:
// 1. an operator's move to an eligible node wins;
// 2. otherwise an eligible node that already holds the resources keeps them (stickiness); if
//    several do (a healed split brain), the best ranked keeps them; but a holder that sees no
//    real server up (kHealthNoRealServer) gives way to the best ranked node that sees some,
//    once both have stayed so for health_settle;
// 3. with failback auto or delayed, a higher-priority node that is at least as healthy and has
//    been BACKUP for failback_delay takes over from the holder; with sync_aware, only once its
//    connection table has caught up (syncWait), or after sync_max_wait more;
// 4. with no holder, the best ranked eligible node.
Decision elect(const std::vector<Candidate>& candidates, const Policy& policy,
               const std::optional<std::string>& move_target);

}  // namespace tandem::election
