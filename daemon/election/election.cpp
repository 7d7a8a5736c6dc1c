#include "election/election.h"

#include <algorithm>
#include <tuple>

namespace tandem::election {

bool eligible(const Candidate& c) {
  return !c.standby && !c.fault && c.health > 0 && c.quorate && c.tiebreaker_ok;
}

std::string ineligibleWhy(const Candidate& c) {
  if (c.standby) return "in standby";
  if (c.fault) return "FAULT";
  if (c.health <= 0) return "health 0";
  if (!c.quorate) return "without quorum";
  if (!c.tiebreaker_ok) return "no tiebreaker target answers";
  return "";
}

bool outranks(const Candidate& a, const Candidate& b) {
  // std::tie compares left to right; names compare reversed so that the smaller wins.
  return std::make_tuple(!a.standby, a.health, a.priority, b.name) >
         std::make_tuple(!b.standby, b.health, b.priority, a.name);
}

namespace {

const Candidate* best(const std::vector<const Candidate*>& list) {
  const Candidate* top = nullptr;
  for (const Candidate* c : list) {
    if (!top || outranks(*c, *top)) top = c;
  }
  return top;
}

}  // namespace

Millis healthSettle(const config::Config& cfg) {
  Millis longest{0};
  bool checked = false;
  for (const auto& vs : cfg.virtual_servers) {
    for (const auto& rs : vs.real_servers) {
      if (rs.check.type == config::CheckType::kNone) continue;
      checked = true;
      longest = std::max(longest, rs.check.interval + rs.check.timeout);
    }
  }
  return checked ? longest + cfg.cluster.heartbeat_interval : Millis(0);
}

std::optional<std::string> syncWait(const Candidate& returning, const Candidate& holder,
                                    const Policy& policy) {
  if (!policy.sync_aware) return std::nullopt;
  if (returning.sync_backup_for < policy.sync_settle) {
    return returning.sync_backup_for == Millis(0)
               ? "its sync backup daemon to run"
               : "its sync backup daemon to run for " + formatDuration(policy.sync_settle) + " (" +
                     formatDuration(returning.sync_backup_for) + " so far)";
  }
  const double want = policy.sync_min_share * static_cast<double>(holder.connections);
  if (static_cast<double>(returning.connections) < want) {
    return "its connection table: " + std::to_string(returning.connections) + " of " + holder.name +
           "'s " + std::to_string(holder.connections) + " connections, wants " +
           std::to_string(static_cast<int>(policy.sync_min_share * 100 + 0.5)) + "%";
  }
  return std::nullopt;
}

Decision elect(const std::vector<Candidate>& candidates, const Policy& policy,
               const std::optional<std::string>& move_target) {
  std::vector<const Candidate*> able;
  for (const auto& c : candidates) {
    if (eligible(c)) able.push_back(&c);
  }
  if (able.empty()) return {std::nullopt, "no node is eligible", ""};

  if (move_target) {
    for (const Candidate* c : able) {
      if (c->name == *move_target) return {c->name, "moved there by an operator", ""};
    }
  }

  std::vector<const Candidate*> holders;
  for (const Candidate* c : able) {
    if (c->claims_active) holders.push_back(c);
  }
  if (!holders.empty()) {
    const Candidate* keeper = best(holders);
    // Only a disagreement that outlasts the checks' phase difference moves the service: a
    // failure every director sees reaches the holder first half the time.
    if (keeper->health <= kHealthNoRealServer &&
        keeper->health_steady_for >= policy.health_settle) {
      std::vector<const Candidate*> seeing;
      for (const Candidate* c : able) {
        if (c->health > kHealthNoRealServer && c->health_steady_for >= policy.health_settle) {
          seeing.push_back(c);
        }
      }
      if (!seeing.empty()) {
        return {best(seeing)->name, "the holder sees no real server up; this node sees some", ""};
      }
    }
    std::string waiting;
    if (policy.failback != config::FailbackPolicy::kManual) {
      const Candidate* preferred = nullptr;
      bool past_ceiling = false;
      for (const Candidate* c : able) {
        if (c->claims_active || c->priority <= keeper->priority || c->health < keeper->health) {
          continue;
        }
        if (c->backup_for < policy.failback_delay) continue;
        // A failback that beats the connection table drops every session it lacks.
        std::optional<std::string> wait = syncWait(*c, *keeper, policy);
        const bool ceiling = c->backup_for >= policy.failback_delay + policy.sync_max_wait;
        if (wait && !ceiling) {
          if (waiting.empty()) waiting = "failback to " + c->name + " waits for " + *wait;
          continue;
        }
        if (!preferred || outranks(*c, *preferred)) {
          preferred = c;
          past_ceiling = wait.has_value();
        }
      }
      if (preferred) {
        return {preferred->name,
                past_ceiling ? "failback to the preferred node after sync_max_wait (" +
                                   formatDuration(policy.sync_max_wait) +
                                   ") without its connection table caught up"
                             : "failback to the preferred node",
                ""};
      }
    }
    return {keeper->name,
            holders.size() > 1 ? "several held the resources; the best ranked keeps them"
                               : "it holds the resources",
            waiting};
  }
  return {best(able)->name, "best ranked eligible node", ""};
}

}  // namespace tandem::election
