// What the election core says of itself without changing: the heartbeat it sends, the view of
// the active node and of a move, the candidates and their explanation (`tandem explain`), its
// status, and when it next needs the clock. The events are in cluster_core.cpp.
#include <algorithm>

#include "election/cluster_core.h"
#include "election/core_time.h"

namespace tandem::election {

std::optional<std::string> ClusterCore::moveView() const {
  if (move_target_.empty()) return std::nullopt;
  return move_target_;
}

std::vector<Candidate> ClusterCore::candidates(Time now) const {
  std::vector<Candidate> candidates{selfCandidate(now)};
  for (const auto& [name, p] : peers_) {
    if (!p.alive || !p.last) continue;
    Candidate c;
    c.name = name;
    c.priority = p.last->priority;
    c.health = p.last->health;
    c.standby = p.last->standby;
    c.quorate = p.last->quorate;
    c.tiebreaker_ok = p.last->tiebreaker_ok;
    // A peer still in INIT counts: it decides within dead_time, and taking over under it
    // would only hand the service back a moment later.
    c.fault = p.last->role == wire::Role::kFault;
    c.claims_active = p.isActive();
    c.backup_for = steadyFor(p.backup_since, now);
    c.health_steady_for = steadyFor(p.health_side_since, now);
    c.connections = p.last->connections;
    c.sync_backup_for = Millis(p.last->sync_backup_ms);
    candidates.push_back(c);
  }
  return candidates;
}

ClusterCore::Explanation ClusterCore::explain(Time now) const {
  Explanation e;
  e.active = activeView();
  const std::vector<Candidate> all = candidates(now);
  for (const Candidate& c : all) {
    e.candidates.push_back({c.name, eligible(c), ineligibleWhy(c)});
  }
  for (const auto& [name, p] : peers_) {
    if (!p.alive) e.candidates.push_back({name, false, p.last ? "lost" : "never heard"});
  }
  std::sort(e.candidates.begin(), e.candidates.end(),
            [](const CandidateView& x, const CandidateView& y) { return x.name < y.name; });
  const Decision now_d = elect(all, config_.policy, moveView());
  if (!e.active) {
    e.why_active = "no node holds the services: " +
                   (now_d.winner ? "the election picks " + *now_d.winner + " (" + now_d.reason +
                                       "), which takes them over next"
                                 : now_d.reason);
  } else if (now_d.winner == e.active) {
    e.why_active = now_d.reason;
    for (const Candidate& c : all) {
      if (c.name != *e.active) continue;
      const char* failback = config_.policy.failback == config::FailbackPolicy::kManual ? "manual"
                             : config_.policy.failback == config::FailbackPolicy::kAuto ? "auto"
                                                                                        : "delayed";
      e.why_active += " (priority " + std::to_string(c.priority) + ", health " +
                      std::to_string(c.health / 10) + "%, failback " + failback + ")";
    }
  } else {
    e.why_active = "it holds them; the election would pick " + now_d.winner.value_or("nobody") +
                   " (" + now_d.reason + ")" +
                   (now_d.waiting.empty() ? "" : ", which waits: " + now_d.waiting);
  }
  if (maintenance_) {
    e.if_active_fails =
        "nothing: maintenance mode is on, so no node takes over until "
        "`tandem maintenance off`";
    return e;
  }
  if (!e.active) {
    e.if_active_fails = "there is no ACTIVE to fail";
    return e;
  }
  std::vector<Candidate> rest;
  for (Candidate c : all) {
    if (c.name == *e.active) continue;
    c.claims_active = false;
    rest.push_back(c);
  }
  const Decision next = elect(rest, config_.policy, moveView());
  e.successor = next.winner;
  if (!next.winner) {
    e.if_active_fails = "nobody takes over: " + next.reason;
    return e;
  }
  e.if_active_fails =
      *next.winner + " takes over (" + next.reason + "), " + formatDuration(config_.dead_time) +
      " after " + *e.active + "'s last heartbeat at most (at once if its tandemd stops cleanly)" +
      (config_.fencing ? ", once the fence command has powered " + *e.active + " off" : "");
  return e;
}

wire::Role ClusterCore::wireRole() const {
  switch (role_) {
    case Role::kInit:
      return wire::Role::kInit;
    case Role::kBackup:
    case Role::kFencing:
      return wire::Role::kBackup;
    case Role::kTakingOver:
    case Role::kActive:
      return wire::Role::kActive;
    case Role::kReleasing:
      return wire::Role::kBackup;
    case Role::kStandby:
      return wire::Role::kStandby;
    case Role::kFault:
      return wire::Role::kFault;
  }
  return wire::Role::kInit;
}

std::optional<std::string> ClusterCore::activeView() const {
  if (role_ == Role::kActive) return config_.self;
  for (const auto& [name, p] : peers_) {
    if (p.alive && p.last && p.last->role == wire::Role::kActive) return name;
  }
  return std::nullopt;
}

Heartbeat ClusterCore::heartbeat() const {
  Heartbeat hb;
  hb.sender = config_.self;
  hb.role = wireRole();
  hb.priority = static_cast<uint8_t>(std::clamp(config_.priority, 0, 255));
  hb.health = static_cast<uint16_t>(std::clamp(health_, 0, 1000));
  hb.standby = standby_;
  hb.quorate = quorumOk();
  hb.tiebreaker_ok = tiebreaker_ok_;
  // In INIT a node that finds its resources in place says so, so that nobody takes over on
  // top of them while it decides whether to resume.
  hb.resources_held = holdsResources(role_) ||
                      (role_ == Role::kInit && startup_.resources_present) ||
                      (role_ == Role::kFault && resource_fault_ && startup_.resources_present);
  hb.active_view = activeView().value_or("");
  hb.epoch = epoch_;
  hb.interval_ms = static_cast<uint32_t>(config_.heartbeat_interval.count());
  hb.move_target = move_target_;
  hb.move_generation = move_generation_;
  if (move_until_ && !move_target_.empty()) {
    // At least 1: a lifetime that is about to end is not one that never does.
    const int64_t left = std::max<int64_t>(1, msBetween(now_hint_, *move_until_));
    hb.move_lifetime_ms = static_cast<uint32_t>(std::min<int64_t>(left, UINT32_MAX));
  }
  hb.maintenance = maintenance_;
  hb.maintenance_generation = maintenance_generation_;
  hb.connections = connections_;
  if (sync_backup_since_) {
    const auto ran = std::max<int64_t>(0, msBetween(*sync_backup_since_, now_hint_));
    hb.sync_backup_ms = static_cast<uint32_t>(std::min<int64_t>(ran, UINT32_MAX));
  }
  hb.templates = templates_;
  if (sync_heard_at_) {
    const auto ago = std::max<int64_t>(0, msBetween(*sync_heard_at_, now_hint_));
    hb.sync_heard_ms = static_cast<uint32_t>(std::min<int64_t>(ago, wire::kSyncNeverHeard - 1));
  }
  return hb;
}

std::optional<Time> ClusterCore::nextDeadline() const {
  std::optional<Time> next;
  auto consider = [&next](Time t) {
    if (!next || t < *next) next = t;
  };
  // A holder at the floor gives way once a disagreement has lasted health_settle, which no
  // event marks: wake up when a health side becomes settled.
  // A deadline already passed was acted on when it came (or never can be, as a failback
  // delay for a node that is not preferred): waking for it again would spin the loop.
  auto considerFuture = [&](const std::optional<Time>& since, Millis after) {
    if (since && *since + after > now_hint_) consider(*since + after);
  };
  auto considerSettle = [&](const std::optional<Time>& since) {
    considerFuture(since, config_.policy.health_settle);
  };
  considerSettle(health_side_since_);
  if (role_ == Role::kInit) {
    // Future ones only: maintenance mode can keep a node in INIT past both.
    considerFuture(init_deadline_, Millis(0));
    considerFuture(init_quorum_deadline_, Millis(0));
  }
  if (standby_until_) consider(*standby_until_);
  if (move_until_) consider(*move_until_);
  if (move_due_) consider(*move_due_);
  if (quorumHeld()) consider(*quorum_lost_at_ + config_.quorum_hold);
  for (const auto& [name, p] : peers_) {
    if (!p.alive) continue;
    Time expiry = p.last_heard + config_.dead_time;
    if (p.daemon_left_at) expiry = std::max(expiry, *p.daemon_left_at + config_.dead_time);
    consider(expiry);
    considerSettle(p.health_side_since);
    if (config_.policy.failback != config::FailbackPolicy::kManual) {
      considerFuture(p.backup_since, config_.policy.failback_delay);
    }
  }
  if (config_.policy.failback != config::FailbackPolicy::kManual) {
    considerFuture(backup_since_, config_.policy.failback_delay);
  }
  if (backup_since_ && *backup_since_ + 2 * config_.heartbeat_interval > now_hint_) {
    consider(*backup_since_ + 2 * config_.heartbeat_interval);
  }
  return next;
}

CoreStatus ClusterCore::status(Time now) const {
  CoreStatus s;
  s.local_node = config_.self;
  s.role = std::string(roleName(role_));
  s.active = activeView();
  s.quorate = quorate_;
  if (quorumHeld()) s.quorum_held_ms = msBetween(*quorum_lost_at_, now);
  s.epoch = epoch_;
  s.move_target = move_target_;
  s.failback_waiting = failback_waiting_;
  s.maintenance = maintenance_;
  if (standby_until_) s.standby_left_ms = std::max<int64_t>(0, msBetween(now, *standby_until_));
  if (move_until_) s.move_left_ms = std::max<int64_t>(0, msBetween(now, *move_until_));
  s.nodes.push_back(NodeView{config_.self,
                             s.role,
                             config_.priority,
                             health_,
                             standby_,
                             {},
                             connections_,
                             steadyFor(sync_backup_since_, now).count(),
                             templates_,
                             {}});
  if (sync_heard_at_)
    s.nodes.back().sync_heard_ms = std::max<int64_t>(0, msBetween(*sync_heard_at_, now));
  for (const auto& [name, p] : peers_) {
    NodeView v;
    v.name = name;
    v.priority = p.last ? p.last->priority : p.configured_priority;
    v.health = p.last ? p.last->health : 0;
    v.standby = p.last && p.last->standby;
    v.role = !p.last ? "UNKNOWN" : !p.alive ? "LOST" : std::string(wire::roleName(p.last->role));
    if (p.last) {
      v.last_heartbeat_ms = msBetween(p.last_heard, now);
      v.connections = p.last->connections;
      v.sync_backup_ms = p.last->sync_backup_ms;
      v.templates = p.last->templates;
      // its age when sent, plus the time since: how long ago at `now`
      if (p.last->sync_heard_ms) v.sync_heard_ms = *p.last->sync_heard_ms + *v.last_heartbeat_ms;
    }
    s.nodes.push_back(v);
  }
  return s;
}

}  // namespace tandem::election
