#include "election/cluster_core.h"

#include <algorithm>

#include "common/duration.h"
#include "election/core_time.h"

namespace tandem::election {

namespace {

bool inElection(Role r) {
  return r == Role::kBackup || r == Role::kFencing || r == Role::kTakingOver || r == Role::kActive;
}

bool atFloor(int health) { return health <= kHealthNoRealServer; }

}  // namespace

std::string_view actionKindName(Action::Kind k) {
  switch (k) {
    case Action::Kind::kStartResources:
      return "start-resources";
    case Action::Kind::kStopResources:
      return "stop-resources";
    case Action::Kind::kRunFence:
      return "run-fence";
    case Action::Kind::kCancelFence:
      return "cancel-fence";
    case Action::Kind::kSendHeartbeat:
      return "send-heartbeat";
    case Action::Kind::kSendRelease:
      return "send-release";
    case Action::Kind::kReannounce:
      return "reannounce";
    case Action::Kind::kPersistRole:
      return "persist-role";
    case Action::Kind::kPersistMaintenance:
      return "persist-maintenance";
    case Action::Kind::kLog:
      return "log";
    case Action::Kind::kAlarm:
      return "alarm";
    case Action::Kind::kRoleChanged:
      return "role-changed";
  }
  return "?";
}

ClusterCore::ClusterCore(CoreConfig config, Time now, Startup startup)
    : config_(std::move(config)),
      init_deadline_(now + config_.dead_time),
      init_quorum_deadline_(now + std::max(config_.dead_time, config_.quorum_hold)),
      startup_(startup),
      epoch_(startup.epoch),
      maintenance_(startup.maintenance),
      maintenance_generation_(startup.maintenance_generation),
      health_side_since_(now) {
  for (const auto& [name, priority] : config_.peers) {
    PeerState p;
    p.name = name;
    p.configured_priority = priority;
    peers_.emplace(name, p);
  }
}

Actions ClusterCore::onReconfigure(Time now, CoreConfig config) {
  now_hint_ = std::max(now_hint_, now);
  Actions out;
  config.self = config_.self;
  for (auto it = peers_.begin(); it != peers_.end();) {
    if (config.peers.count(it->first) == 0) {
      if (lost_holder_ == it->first) lost_holder_.reset();
      out.push_back({Action::Kind::kLog,
                     "peer removed by reload node=" + config_.self + " peer=" + it->first});
      it = peers_.erase(it);
    } else {
      it->second.configured_priority = config.peers.at(it->first);
      ++it;
    }
  }
  for (const auto& [name, priority] : config.peers) {
    if (peers_.count(name)) continue;
    PeerState p;
    p.name = name;
    p.configured_priority = priority;
    peers_.emplace(name, p);
  }
  if (!config.fencing) lost_holder_.reset();
  config_ = std::move(config);
  return finish(now, std::move(out));
}

Actions ClusterCore::finish(Time now, Actions out) {
  evaluate(now, out);
  return out;
}

Actions ClusterCore::onHeartbeat(Time now, const Heartbeat& hb) {
  Actions out;
  auto it = peers_.find(hb.sender);
  if (it == peers_.end() || hb.sender == config_.self) return out;
  PeerState& p = it->second;
  bool was_holding = p.holds();
  // Heard before, then lost: across a partition it may have taken over and announced the VIPs.
  bool was_lost = !p.alive && p.last.has_value();
  if (p.last && p.last->incarnation != hb.incarnation) {
    out.push_back({Action::Kind::kLog, "peer restarted node=" + p.name});
  }
  if (!p.alive) {
    out.push_back({Action::Kind::kLog,
                   "peer up node=" + p.name + " role=" + std::string(wire::roleName(hb.role))});
  }
  if (!p.alive || !p.last || atFloor(p.last->health) != atFloor(hb.health)) {
    p.health_side_since = now;
  }
  p.alive = true;
  p.last = hb;
  p.last_heard = now;
  p.daemon_left_at.reset();
  if (hb.role == wire::Role::kBackup) {
    if (!p.backup_since) p.backup_since = now;
  } else {
    p.backup_since.reset();
  }
  epoch_ = std::max(epoch_, hb.epoch);
  if (hb.move_generation > move_generation_) {
    move_generation_ = hb.move_generation;
    move_target_ = hb.move_target;
    move_until_.reset();
    move_due_.reset();
    if (!move_target_.empty()) move_due_ = now + moveTimeout();
    // What the sender had left, from now: within a heartbeat of its own end.
    if (!move_target_.empty() && hb.move_lifetime_ms > 0) {
      move_until_ = now + Millis(hb.move_lifetime_ms);
    }
  }
  if (hb.maintenance_generation > maintenance_generation_) {
    adoptMaintenance(hb.maintenance, hb.maintenance_generation, p.name, out);
  }
  if (lost_holder_ == p.name) {
    // It is back: whatever it holds it now tells us, so nothing needs fencing.
    lost_holder_.reset();
    fence_blocked_ = false;
  }
  // A peer that held the VIPs (or may have, while it was out of sight) and holds them no more
  // may have pointed the neighbours' caches at itself: the ACTIVE announces them again.
  if (role_ == Role::kActive && (was_holding || was_lost) && !p.holds()) {
    out.push_back({Action::Kind::kReannounce, p.name});
  }
  return finish(now, std::move(out));
}

Actions ClusterCore::onRelease(Time now, const std::string& from, uint64_t epoch) {
  Actions out;
  auto it = peers_.find(from);
  if (it == peers_.end()) return out;
  PeerState& p = it->second;
  if (p.last && epoch < p.last->epoch) {
    out.push_back({Action::Kind::kLog,
                   "stale release ignored node=" + from + " epoch=" + std::to_string(epoch) +
                       " its heartbeats' epoch=" + std::to_string(p.last->epoch)});
    return finish(now, std::move(out));
  }
  if (p.last) {
    p.last->resources_held = false;
    if (p.last->role == wire::Role::kActive) p.last->role = wire::Role::kBackup;
  }
  out.push_back({Action::Kind::kLog, "peer released node=" + from});
  if (lost_holder_ == from) lost_holder_.reset();
  // Only a node that held the resources sends this. Whether or not this ACTIVE knew it held
  // them (after a partition it did not: it had lost that peer), its announcements may have
  // moved the neighbours' caches to it.
  if (role_ == Role::kActive) out.push_back({Action::Kind::kReannounce, from});
  return finish(now, std::move(out));
}

Actions ClusterCore::onDaemonLeft(Time now, const std::string& peer) {
  Actions out;
  auto it = peers_.find(peer);
  if (it == peers_.end() || !it->second.alive) return out;
  it->second.daemon_left_at = now;
  out.push_back({Action::Kind::kLog, "peer daemon left the group node=" + peer +
                                         " node_still_member=yes waiting_ms=" +
                                         std::to_string(config_.dead_time.count())});
  return finish(now, std::move(out));
}

Actions ClusterCore::onNodeLeft(Time now, const std::string& peer) {
  Actions out;
  // The ring's verdict is never dated: it comes token + consensus after the ring lost the node,
  // possibly after the link is back (a cut that has healed: the lab saw one arrive 100 ms into
  // the next cut and start a takeover before dead_time), or it concerns one ring link only. So
  // it declares no peer lost on its own. A peer already past its deadline is lost to the
  // silence now, as the tick would have (the loop may run this first after a stall); any other
  // keeps its deadline, and the heartbeats decide.
  expirePeers(now, out);
  auto it = peers_.find(peer);
  if (it != peers_.end() && it->second.alive) {
    auto silent = std::chrono::duration_cast<Millis>(now - it->second.last_heard);
    out.push_back({Action::Kind::kLog, "corosync dropped node=" + peer + " last_heartbeat_ms_ago=" +
                                           std::to_string(silent.count()) + "; dead_time decides"});
  }
  return finish(now, std::move(out));
}

Actions ClusterCore::onTick(Time now) {
  // Peers are declared dead here only, at their deadline: the shell reads what has arrived
  // before it ticks (ClusterNode), so a frame waiting in a socket is never overtaken by an
  // unrelated event that happens to run first after a stall.
  Actions out;
  expirePeers(now, out);
  return finish(now, std::move(out));
}

Actions ClusterCore::onQuorum(Time now, bool quorate) {
  Actions out;
  if (quorumHeld()) {
    // A corosync that has just come back says "not quorate" until it has rejoined the
    // membership (about a second; with two_node, wait_for_all too). Within the hold that answer
    // is the restart speaking, not the cluster: the held verdict stands until votequorum says
    // quorate, or until the hold runs out, when this answer takes over.
    if (*quorate_ && !quorate) {
      if (!quorum_after_hold_) {
        out.push_back({Action::Kind::kLog,
                       "votequorum back node=" + config_.self + " after " +
                           std::to_string(msBetween(*quorum_lost_at_, now)) +
                           " ms, not quorate until it rejoins; the held verdict stands for "
                           "the rest of quorum_hold"});
      }
      quorum_after_hold_ = false;
      return finish(now, std::move(out));
    }
    out.push_back({Action::Kind::kLog, "votequorum back node=" + config_.self + " after " +
                                           std::to_string(msBetween(*quorum_lost_at_, now)) +
                                           " ms, within quorum_hold"});
  }
  quorum_lost_at_.reset();
  quorum_after_hold_.reset();
  if (quorate_ != quorate) {
    const char* what = !quorate_ ? (quorate ? "known: quorate" : "known: not quorate")
                                 : (quorate ? "gained" : "lost");
    out.push_back({Action::Kind::kLog, std::string("quorum ") + what + " node=" + config_.self});
    quorate_ = quorate;
    out.push_back({Action::Kind::kSendHeartbeat, ""});
  }
  return finish(now, std::move(out));
}

Actions ClusterCore::onQuorumLost(Time now) {
  // Nothing to hold when votequorum never answered, or when its verdict is already held.
  if (quorate_ && !quorum_lost_at_) quorum_lost_at_ = now;
  return finish(now, {});
}

void ClusterCore::expireQuorumHold(Time now, Actions& out) {
  if (!quorumHeld() || now < *quorum_lost_at_ + config_.quorum_hold) return;
  if (quorum_after_hold_) {
    out.push_back({Action::Kind::kLog, "quorum lost node=" + config_.self +
                                           ": votequorum came back " + "but has not said quorate " +
                                           std::to_string(msBetween(*quorum_lost_at_, now)) +
                                           " ms after it was lost"});
  } else {
    out.push_back(
        {Action::Kind::kLog, "quorum unknown node=" + config_.self + ": votequorum lost " +
                                 std::to_string(msBetween(*quorum_lost_at_, now)) + " ms ago"});
  }
  // An unknown verdict keeps the loss's time, for the reason the election gives.
  if (quorum_after_hold_) quorum_lost_at_.reset();
  quorate_ = quorum_after_hold_;
  quorum_after_hold_.reset();
  out.push_back({Action::Kind::kSendHeartbeat, ""});
}

Actions ClusterCore::onLocalHealth(Time now, int health, bool tiebreaker_ok) {
  Actions out;
  if (health != health_ || tiebreaker_ok != tiebreaker_ok_) {
    out.push_back({Action::Kind::kLog, "local health node=" + config_.self +
                                           " health=" + std::to_string(health) +
                                           " tiebreaker=" + (tiebreaker_ok ? "ok" : "lost")});
    if (atFloor(health) != atFloor(health_)) health_side_since_ = now;
    health_ = health;
    tiebreaker_ok_ = tiebreaker_ok;
    out.push_back({Action::Kind::kSendHeartbeat, ""});
  }
  return finish(now, std::move(out));
}

Actions ClusterCore::onSyncState(Time now, const SyncReport& sync) {
  Actions out;
  connections_ = sync.connections;
  templates_ = sync.templates;
  if (sync.backup_running && !sync_backup_since_) sync_backup_since_ = now;
  if (!sync.backup_running) sync_backup_since_.reset();
  sync_heard_at_.reset();
  if (sync.heard_ago_ms) sync_heard_at_ = now - Millis(std::max<int64_t>(0, *sync.heard_ago_ms));
  return finish(now, std::move(out));
}

Actions ClusterCore::onStandby(Time now, bool standby, std::optional<Millis> lifetime) {
  Actions out;
  std::optional<Time> until;
  if (standby && lifetime) until = now + *lifetime;
  if (standby != standby_ || until != standby_until_) {
    standby_ = standby;
    standby_until_ = until;
    out.push_back({Action::Kind::kLog,
                   std::string("standby ") + (standby ? "on" : "off") + " node=" + config_.self +
                       (until ? " lifetime=" + formatDuration(*lifetime) : "")});
  }
  return finish(now, std::move(out));
}

Actions ClusterCore::onMove(Time now, const std::string& target, uint64_t generation,
                            std::optional<Millis> lifetime) {
  Actions out;
  if (generation <= move_generation_) return out;
  move_generation_ = generation;
  move_target_ = target;
  move_until_.reset();
  move_due_.reset();
  if (!target.empty() && lifetime) move_until_ = now + *lifetime;
  if (!target.empty()) move_due_ = now + moveTimeout();
  out.push_back({Action::Kind::kLog,
                 target.empty() ? std::string("move cleared")
                                : "move requested target=" + target +
                                      (lifetime ? " lifetime=" + formatDuration(*lifetime) : "")});
  out.push_back({Action::Kind::kSendHeartbeat, ""});
  return finish(now, std::move(out));
}

Actions ClusterCore::onMaintenance(Time now, bool on, uint64_t generation) {
  Actions out;
  if (generation <= maintenance_generation_) return out;
  adoptMaintenance(on, generation, config_.self, out);
  out.push_back({Action::Kind::kSendHeartbeat, ""});
  return finish(now, std::move(out));
}

void ClusterCore::adoptMaintenance(bool on, uint64_t generation, const std::string& from,
                                   Actions& out) {
  maintenance_generation_ = generation;
  if (on != maintenance_) {
    maintenance_ = on;
    out.push_back({Action::Kind::kLog, std::string("maintenance ") + (on ? "on" : "off") +
                                           " node=" + config_.self + " from=" + from +
                                           (on ? " (nothing is started or stopped until it is off)"
                                               : " (the election decides again)")});
  }
  out.push_back({Action::Kind::kPersistMaintenance,
                 std::string(on ? "on " : "off ") + std::to_string(generation)});
}

void ClusterCore::expireLifetimes(Time now, Actions& out) {
  if (standby_until_ && now >= *standby_until_) {
    standby_until_.reset();
    standby_ = false;
    out.push_back(
        {Action::Kind::kLog, "standby off node=" + config_.self + " (its lifetime ran out)"});
  }
  // It took them: seen ACTIVE (a peer taking over says ACTIVE on the wire), or this node is
  // the target and holds or is taking them.
  if (move_due_ &&
      (activeView() == move_target_ || (move_target_ == config_.self && holdsResources(role_)))) {
    move_due_.reset();
  }
  // Nothing moves in maintenance: the move has its whole time once it ends.
  if (move_due_ && maintenance_) move_due_ = now + moveTimeout();
  if (move_due_ && now >= *move_due_) {
    out.push_back(
        {Action::Kind::kLog, "move failed target=" + move_target_ + " (not ACTIVE within " +
                                 formatDuration(moveTimeout()) +
                                 "; dropped on every node, so it cannot pull the services there "
                                 "later)"});
    move_due_.reset();
    move_until_.reset();
    move_target_.clear();
    // A newer generation without a target: every node drops it too, whatever its own timer
    // says. Nodes that disagree on a move could otherwise each wait for the other.
    ++move_generation_;
    out.push_back({Action::Kind::kSendHeartbeat, ""});
  }
  if (move_until_ && now >= *move_until_) {
    move_until_.reset();
    move_due_.reset();
    out.push_back({Action::Kind::kLog, "move ended target=" + move_target_ +
                                           " (its lifetime ran out; the election decides again)"});
    move_target_.clear();
  }
}

Actions ClusterCore::onResourcesStarted(Time now) {
  Actions out;
  apply(now, RoleEvent::kResourcesStarted, out);
  return finish(now, std::move(out));
}

Actions ClusterCore::onResourcesStopped(Time now) {
  Actions out;
  apply(now, RoleEvent::kResourcesStopped, out);
  return finish(now, std::move(out));
}

Actions ClusterCore::onResourceFailed(Time now, const std::string& what) {
  Actions out;
  last_reason_ = "resource failed: " + what;
  resource_fault_ = true;
  if (maintenance_) {
    // Releasing is acting on the resources, and no peer would take them over: the services
    // would be down until maintenance ends. Said loudly; dealt with when it ends.
    out.push_back({Action::Kind::kAlarm, "maintenance mode: " + last_reason_ +
                                             "; left as it is until `tandem maintenance off`"});
    return finish(now, std::move(out));
  }
  apply(now, RoleEvent::kResourceFailed, out);
  return finish(now, std::move(out));
}

Actions ClusterCore::onFenceResult(Time now, bool ok, const std::string& detail) {
  Actions out;
  if (role_ != Role::kFencing) return out;
  if (ok) {
    last_reason_ = "fenced " + lost_holder_.value_or("?") + ": " + detail;
    lost_holder_.reset();
    apply(now, RoleEvent::kFenceDone, out);
  } else {
    last_reason_ = "fencing " + lost_holder_.value_or("?") + " failed: " + detail +
                   "; takeover blocked until the peer returns or `tandem resource clear`";
    fence_blocked_ = true;
    apply(now, RoleEvent::kFenceFailed, out);
  }
  return finish(now, std::move(out));
}

Actions ClusterCore::onClearFailures(Time now) {
  Actions out;
  if (resource_fault_ || fence_blocked_) {
    out.push_back({Action::Kind::kLog, "failures cleared node=" + config_.self});
  }
  resource_fault_ = false;
  fence_blocked_ = false;
  return finish(now, std::move(out));
}

void ClusterCore::markLost(PeerState& p, const std::string& why, Actions& out) {
  bool held = p.holds();
  p.alive = false;
  p.backup_since.reset();
  p.health_side_since.reset();
  p.daemon_left_at.reset();
  if (held) lost_holder_ = p.name;
  out.push_back({Action::Kind::kLog, "peer lost node=" + p.name + " reason=\"" + why +
                                         "\" held_resources=" + (held ? "yes" : "no")});
}

void ClusterCore::expirePeers(Time now, Actions& out) {
  for (auto& [name, p] : peers_) {
    if (!p.alive) continue;
    Time expiry = p.last_heard + config_.dead_time;
    // A daemon that left while its node stays a member still has its VIPs and IPVS table in
    // the kernel; give it dead_time from the leave to come back before taking over.
    if (p.daemon_left_at) expiry = std::max(expiry, *p.daemon_left_at + config_.dead_time);
    if (now >= expiry) {
      markLost(p,
               p.daemon_left_at ? "its daemon did not come back within dead_time"
                                : "no heartbeat for dead_time",
               out);
    }
  }
}

bool ClusterCore::selfFit() const {
  return health_ > 0 && tiebreaker_ok_ && quorumOk() && !resource_fault_;
}

bool ClusterCore::someoneElseHolds() const {
  return std::any_of(peers_.begin(), peers_.end(),
                     [](const auto& kv) { return kv.second.holds(); });
}

Candidate ClusterCore::selfCandidate(Time now) const {
  Candidate c;
  c.name = config_.self;
  c.priority = config_.priority;
  c.health = health_;
  c.standby = standby_;
  c.quorate = quorumOk();
  c.tiebreaker_ok = tiebreaker_ok_;
  c.fault = resource_fault_;
  c.claims_active = holdsResources(role_);
  c.backup_for = steadyFor(backup_since_, now);
  c.health_steady_for = steadyFor(health_side_since_, now);
  c.connections = connections_;
  c.sync_backup_for = steadyFor(sync_backup_since_, now);
  return c;
}

std::optional<RoleEvent> ClusterCore::nextEvent(Time now) {
  failback_waiting_.clear();  // set again below when this election holds a failback back
  if (role_ == Role::kInit) {
    bool all_heard =
        std::all_of(peers_.begin(), peers_.end(), [](const auto& kv) { return kv.second.alive; });
    // Every decision out of INIT counts the quorum; it is unknown until votequorum's first
    // answer, which a busy start can deliver after the peers' heartbeats.
    const bool quorum_known = config_.ignore_quorum || quorate_.has_value();
    if ((!all_heard || !quorum_known) && now < init_deadline_) return std::nullopt;
    // A director restarted while ACTIVE still holds its resources and says so in its
    // heartbeats, so nobody takes over: it waits for that answer up to quorum_hold rather than
    // release for the want of it (and take them back a moment later).
    if (!quorum_known && startup_.was_active && startup_.resources_present && !someoneElseHolds() &&
        now < init_quorum_deadline_) {
      return std::nullopt;
    }
    if (startup_.resources_present && (!startup_.was_active || someoneElseHolds())) {
      if (maintenance_) {
        // Stay INIT, saying so in the heartbeats: releasing is acting on a resource.
        last_reason_ = "maintenance mode: resources found that another node may hold; left";
        return std::nullopt;
      }
      last_reason_ = startup_.was_active ? "another node took over while this daemon was away"
                                         : "resources found that this node did not hold";
      return RoleEvent::kReleaseOrphans;
    }
    if (startup_.was_active && startup_.resources_present) {
      if (maintenance_) {
        last_reason_ = "restarted while ACTIVE in maintenance mode; what is in place is kept";
        return RoleEvent::kResumeHeld;
      }
      last_reason_ = "restarted while ACTIVE and nobody took over";
      return RoleEvent::kResumeActive;
    }
    last_reason_ = "startup";
    return RoleEvent::kInitDone;
  }

  if (maintenance_) return std::nullopt;  // nothing starts or stops: see onMaintenance
  bool fit = selfFit();
  if (standby_ && (inElection(role_) || role_ == Role::kFault)) {
    last_reason_ = "standby requested";
    return RoleEvent::kStandbyOn;
  }
  if (!standby_ && role_ == Role::kStandby) {
    last_reason_ = "standby cleared";
    return RoleEvent::kStandbyOff;
  }
  if (!fit && inElection(role_)) {
    last_reason_ = health_ <= 0              ? "health is 0"
                   : !tiebreaker_ok_         ? "no tiebreaker target answers"
                   : !quorumOk() && quorate_ ? "quorum lost"
                   : !quorumOk() && quorum_lost_at_
                       ? "quorum unknown (votequorum gone for longer than quorum_hold)"
                   : !quorumOk() ? "quorum not known yet (votequorum has not answered)"
                                 : "a resource failed";
    return RoleEvent::kHealthLost;
  }
  if (fit && role_ == Role::kFault) {
    last_reason_ = "healthy again";
    return RoleEvent::kHealthBack;
  }
  if (!inElection(role_)) return std::nullopt;

  Decision d = elect(candidates(now), config_.policy, moveView());
  failback_waiting_ = d.waiting;
  bool me = d.winner == config_.self;
  if (role_ == Role::kBackup) {
    if (!me || someoneElseHolds() || fence_blocked_) return std::nullopt;
    if (settling(now)) return std::nullopt;
    last_reason_ = d.reason;
    if (lost_holder_ && config_.fencing) return RoleEvent::kElectedNeedsFence;
    return RoleEvent::kElected;
  }
  if (!me) {
    last_reason_ = d.winner ? d.reason + " (winner " + *d.winner + ")" : d.reason;
    return RoleEvent::kNotElected;
  }
  return std::nullopt;
}

bool ClusterCore::settling(Time now) const {
  // Right after this node became BACKUP (a start, quorum regained), a preferred peer may be
  // leaving FAULT or INIT at the same moment; its next heartbeat says so. Taking over before
  // it would hand the service back at the next failback, so wait two heartbeats for it. A peer
  // that is lost is not waited for: that takeover is the point.
  if (!backup_since_ || now - *backup_since_ >= 2 * config_.heartbeat_interval) return false;
  for (const auto& [name, p] : peers_) {
    if (!p.alive || !p.last || p.last->priority <= config_.priority) continue;
    Candidate c;
    c.standby = p.last->standby;
    c.quorate = p.last->quorate;
    c.tiebreaker_ok = p.last->tiebreaker_ok;
    c.health = p.last->health;
    c.fault = p.last->role == wire::Role::kFault;
    if (!eligible(c) || p.last->role == wire::Role::kInit) return true;
  }
  return false;
}

void ClusterCore::evaluate(Time now, Actions& out) {
  now_hint_ = std::max(now_hint_, now);
  expireQuorumHold(now, out);
  expireLifetimes(now, out);
  // Each event moves the machine; a few in a row settle it (e.g. released, then standby).
  for (int i = 0; i < 8; ++i) {
    std::optional<RoleEvent> ev = nextEvent(now);
    if (!ev) break;
    Role before = role_;
    apply(now, *ev, out);
    if (role_ == before) break;
  }
  // Said once when a failback starts to wait and once when it stops, not at every heartbeat's
  // election: what it waits for ("... (4.2 s so far)", the table's count) changes at each one.
  // `tandem status` shows the wait as it is now.
  if (failback_waiting_.empty() == logged_waiting_) {
    logged_waiting_ = !failback_waiting_.empty();
    const std::string node = " node=" + config_.self;
    out.push_back({Action::Kind::kLog,
                   logged_waiting_ ? "connection sync holds back a failback" + node +
                                         " waiting=\"" + failback_waiting_ + "\""
                                   : "connection sync no longer holds back a failback" + node});
  }
}

void ClusterCore::apply(Time now, RoleEvent ev, Actions& out) {
  std::optional<Transition> t = step(role_, ev);
  if (!t) return;
  Role from = role_;
  // A resume goes through TAKING_OVER to put back what went missing, but it is the same
  // tenure: the epoch it restarted with stays.
  if (t->next == Role::kTakingOver && from != Role::kInit) {
    ++epoch_;
    if (!config_.fencing) lost_holder_.reset();
  }
  role_ = t->next;
  if (role_ != from) ++role_changes_[static_cast<size_t>(ev)];
  if (role_ == Role::kTakingOver && from != Role::kTakingOver) {
    taking_over_at_ = now;
    resuming_ = from == Role::kInit;
  }
  if (role_ == Role::kActive && from == Role::kTakingOver && !resuming_ && taking_over_at_) {
    ++takeovers_;
    last_takeover_ = std::chrono::duration_cast<Millis>(now - *taking_over_at_);
  }
  if (role_ != Role::kTakingOver) taking_over_at_.reset();
  if (role_ == Role::kBackup) {
    if (from != Role::kBackup) backup_since_ = now;
  } else {
    backup_since_.reset();
  }
  if (from == Role::kInit) startup_ = Startup{};  // what startup found is now dealt with
  out.push_back({Action::Kind::kLog, "role change node=" + config_.self +
                                         " from=" + std::string(roleName(from)) +
                                         " to=" + std::string(roleName(role_)) +
                                         " event=" + std::string(roleEventName(ev)) + " reason=\"" +
                                         last_reason_ + "\" epoch=" + std::to_string(epoch_)});
  out.push_back({Action::Kind::kPersistRole, std::string(roleName(role_))});
  out.push_back(
      {Action::Kind::kRoleChanged, "", RoleChange{from, role_, ev, last_reason_, epoch_}});
  for (RoleAction a : t->actions) {
    switch (a) {
      case RoleAction::kStartResources:
        out.push_back({Action::Kind::kStartResources, ""});
        break;
      case RoleAction::kStopResources:
        out.push_back({Action::Kind::kStopResources, ""});
        break;
      case RoleAction::kRunFence:
        out.push_back({Action::Kind::kRunFence, lost_holder_.value_or("")});
        break;
      case RoleAction::kCancelFence:
        out.push_back({Action::Kind::kCancelFence, ""});
        break;
      case RoleAction::kAnnounce:
        out.push_back({Action::Kind::kSendHeartbeat, ""});
        break;
      case RoleAction::kSendRelease:
        out.push_back({Action::Kind::kSendRelease, move_target_});
        break;
      case RoleAction::kAlarm:
        out.push_back({Action::Kind::kAlarm, last_reason_});
        break;
    }
  }
}

}  // namespace tandem::election
