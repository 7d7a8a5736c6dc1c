#include "election/election.h"

#include <gtest/gtest.h>

namespace tandem::election {
namespace {

using config::FailbackPolicy;
using namespace std::chrono_literals;

Candidate node(std::string name, int priority) {
  Candidate c;
  c.name = std::move(name);
  c.priority = priority;
  return c;
}

TEST(Election, NoHolderPicksTheBestRanked) {
  auto d = elect({node("lb1", 100), node("lb2", 200)}, {}, std::nullopt);
  EXPECT_EQ(d.winner, "lb2");
}

TEST(Election, TiesBreakOnHealthThenPriorityThenName) {
  Candidate a = node("lb1", 100), b = node("lb2", 100);
  EXPECT_EQ(elect({a, b}, {}, std::nullopt).winner, "lb1") << "equal: the smaller name";
  b.health = 1000;
  a.health = 500;
  EXPECT_EQ(elect({a, b}, {}, std::nullopt).winner, "lb2") << "healthier beats the name";
  a.health = 1000;
  a.priority = 50;
  EXPECT_EQ(elect({a, b}, {}, std::nullopt).winner, "lb2") << "priority beats the name";
}

TEST(Election, IneligibleNodesNeverWin) {
  Candidate a = node("lb1", 200), b = node("lb2", 100);
  a.standby = true;
  EXPECT_EQ(elect({a, b}, {}, std::nullopt).winner, "lb2");
  a.standby = false;
  a.tiebreaker_ok = false;
  EXPECT_EQ(elect({a, b}, {}, std::nullopt).winner, "lb2");
  a.tiebreaker_ok = true;
  a.quorate = false;
  EXPECT_EQ(elect({a, b}, {}, std::nullopt).winner, "lb2");
  a.quorate = true;
  a.health = 0;
  EXPECT_EQ(elect({a, b}, {}, std::nullopt).winner, "lb2");
  b.fault = true;
  EXPECT_FALSE(elect({a, b}, {}, std::nullopt).winner);
}

TEST(Election, AHolderThatSeesNoRealServerGivesWayToOneThatSeesSome) {
  Candidate a = node("lb1", 200), b = node("lb2", 100);
  a.claims_active = true;
  a.health = kHealthNoRealServer;
  b.health = 300;
  auto d = elect({a, b}, {FailbackPolicy::kManual, 0ms}, std::nullopt);
  EXPECT_EQ(d.winner, "lb2");
  EXPECT_EQ(d.reason, "the holder sees no real server up; this node sees some");
  b.health = kHealthNoRealServer;
  EXPECT_EQ(elect({a, b}, {FailbackPolicy::kManual, 0ms}, std::nullopt).winner, "lb1")
      << "neither sees any: the holder keeps them, and the VIPs serve the fallback";
  a.health = 400;
  b.health = 1000;
  EXPECT_EQ(elect({a, b}, {FailbackPolicy::kManual, 0ms}, std::nullopt).winner, "lb1")
      << "a holder that sees some keeps them, even against a healthier backup";
}

// Each director runs its own checks out of phase: a disagreement shorter than health_settle is
// the same failure seen a moment apart, and moves nothing.
TEST(Election, AHolderAtTheFloorGivesWayOnlyOnceItHasStayedThereForTheSettle) {
  Candidate a = node("lb1", 200), b = node("lb2", 100);
  a.claims_active = true;
  a.health = kHealthNoRealServer;
  b.health_steady_for = 1h;
  Policy p{FailbackPolicy::kManual, 0ms, 3s};
  a.health_steady_for = 2999ms;
  auto d = elect({a, b}, p, std::nullopt);
  EXPECT_EQ(d.winner, "lb1");
  EXPECT_EQ(d.reason, "it holds the resources");
  a.health_steady_for = 3s;
  d = elect({a, b}, p, std::nullopt);
  EXPECT_EQ(d.winner, "lb2");
  EXPECT_EQ(d.reason, "the holder sees no real server up; this node sees some");
}

TEST(Election, TheNodeThatSeesSomeMustHaveSeenThemForTheSettleToo) {
  Candidate a = node("lb1", 200), b = node("lb2", 150), c = node("lb3", 100);
  a.claims_active = true;
  a.health = kHealthNoRealServer;
  a.health_steady_for = 1h;
  c.health = kHealthNoRealServer;
  c.health_steady_for = 1h;
  Policy p{FailbackPolicy::kManual, 0ms, 3s};
  b.health_steady_for = 2999ms;
  EXPECT_EQ(elect({a, b, c}, p, std::nullopt).winner, "lb1")
      << "lb2 just came back above the floor: lb1 may see it any moment";
  b.health_steady_for = 3s;
  EXPECT_EQ(elect({a, b, c}, p, std::nullopt).winner, "lb2");
  // Only a settled seer counts: an unsettled better one does not stop a settled one taking it.
  b.health_steady_for = 1s;
  c.health = 1000;
  c.health_steady_for = 3s;
  EXPECT_EQ(elect({a, b, c}, p, std::nullopt).winner, "lb3");
}

config::Config checkedConfig(std::vector<std::vector<std::pair<Millis, Millis>>> services) {
  config::Config cfg;
  cfg.cluster.heartbeat_interval = 200ms;
  for (const auto& checks : services) {
    config::VirtualServer vs;
    for (const auto& [interval, timeout] : checks) {
      config::RealServer rs;
      if (interval > 0ms) rs.check.type = config::CheckType::kTcp;
      rs.check.interval = interval;
      rs.check.timeout = timeout;
      vs.real_servers.push_back(rs);
    }
    cfg.virtual_servers.push_back(vs);
  }
  return cfg;
}

TEST(Election, TheHealthSettleIsTheLongestCheckPeriodPlusAHeartbeat) {
  EXPECT_EQ(healthSettle(checkedConfig({})), 0ms) << "no virtual server";
  EXPECT_EQ(healthSettle(checkedConfig({{{0ms, 0ms}}})), 0ms) << "nothing is checked";
  EXPECT_EQ(healthSettle(checkedConfig({{{2s, 1s}}})), 3200ms);
  // The longest period wins, across real servers and services; an unchecked server adds none.
  EXPECT_EQ(healthSettle(checkedConfig({{{2s, 1s}, {0ms, 0ms}}, {{1s, 5s}, {3s, 500ms}}})), 6200ms);
}

TEST(Election, TheHolderKeepsTheResourcesUnderManualFailback) {
  Candidate a = node("lb1", 200), b = node("lb2", 100);
  b.claims_active = true;
  a.backup_for = 1h;
  EXPECT_EQ(elect({a, b}, {FailbackPolicy::kManual, 0ms}, std::nullopt).winner, "lb2");
}

TEST(Election, AutoFailbackWaitsForTheDelay) {
  Candidate a = node("lb1", 200), b = node("lb2", 100);
  b.claims_active = true;
  Policy p{FailbackPolicy::kAuto, 30s};
  a.backup_for = 29s;
  EXPECT_EQ(elect({a, b}, p, std::nullopt).winner, "lb2");
  a.backup_for = 30s;
  EXPECT_EQ(elect({a, b}, p, std::nullopt).winner, "lb1");
  a.health = 900;
  EXPECT_EQ(elect({a, b}, p, std::nullopt).winner, "lb2") << "never fail back to a sicker node";
}

Policy syncAware(FailbackPolicy failback, Millis delay) {
  Policy p{failback, delay};
  p.sync_aware = true;
  p.sync_settle = 10s;
  p.sync_min_share = 0.8;
  p.sync_max_wait = 2min;
  return p;
}

TEST(Election, SyncAwareFailbackWaitsForTheBackupDaemonThenForTheTable) {
  for (FailbackPolicy f : {FailbackPolicy::kAuto, FailbackPolicy::kDelayed}) {
    const Policy p = syncAware(f, 30s);
    Candidate back = node("lb1", 200), holder = node("lb2", 100);
    holder.claims_active = true;
    holder.connections = 1000;
    back.backup_for = 40s;
    back.sync_backup_for = 9s;
    back.connections = 1000;
    Decision d = elect({back, holder}, p, std::nullopt);
    EXPECT_EQ(d.winner, "lb2");
    EXPECT_EQ(d.waiting,
              "failback to lb1 waits for its sync backup daemon to run for 10s (9s so far)");
    back.sync_backup_for = 10s;
    back.connections = 799;
    d = elect({back, holder}, p, std::nullopt);
    EXPECT_EQ(d.winner, "lb2");
    EXPECT_EQ(d.waiting,
              "failback to lb1 waits for its connection table: 799 of lb2's 1000 connections, "
              "wants 80%");
    back.connections = 800;
    d = elect({back, holder}, p, std::nullopt);
    EXPECT_EQ(d.winner, "lb1");
    EXPECT_EQ(d.reason, "failback to the preferred node");
    EXPECT_EQ(d.waiting, "");
  }
}

TEST(Election, SyncAwareFailbackGoesAheadAfterTheCeilingAndSaysSo) {
  const Policy p = syncAware(FailbackPolicy::kDelayed, 30s);
  Candidate back = node("lb1", 200), holder = node("lb2", 100);
  holder.claims_active = true;
  holder.connections = 1000;
  back.sync_backup_for = 1h;
  back.connections = 10;
  back.backup_for = 30s + 2min - 1ms;
  EXPECT_EQ(elect({back, holder}, p, std::nullopt).winner, "lb2");
  back.backup_for = 30s + 2min;
  Decision d = elect({back, holder}, p, std::nullopt);
  EXPECT_EQ(d.winner, "lb1");
  EXPECT_EQ(d.reason,
            "failback to the preferred node after sync_max_wait (2m) without its connection "
            "table caught up");
}

TEST(Election, SyncAwarenessNeverHoldsBackATakeoverOrAManualPolicy) {
  const Policy p = syncAware(FailbackPolicy::kAuto, 0s);
  Candidate a = node("lb1", 200), b = node("lb2", 100);
  // No holder (the ACTIVE died): the best ranked takes over whatever its table holds.
  b.connections = 0;
  a.sync_backup_for = 0s;
  EXPECT_EQ(elect({a, b}, p, std::nullopt).winner, "lb1");
  // An empty holder table: the share is met at once, the settle time still counts.
  b.claims_active = true;
  a.backup_for = 1min;  // within sync_max_wait
  a.sync_backup_for = 10s;
  EXPECT_EQ(elect({a, b}, p, std::nullopt).winner, "lb1");
  // Without sync awareness, no wait.
  Policy plain = p;
  plain.sync_aware = false;
  a.sync_backup_for = 0s;
  EXPECT_EQ(elect({a, b}, plain, std::nullopt).winner, "lb1");
  EXPECT_EQ(elect({a, b}, p, std::nullopt).winner, "lb2");
  // An operator's move does not wait.
  EXPECT_EQ(elect({a, b}, p, std::string("lb1")).winner, "lb1");
}

TEST(Election, HealedSplitBrainKeepsTheBestRankedHolder) {
  Candidate a = node("lb1", 100), b = node("lb2", 200);
  a.claims_active = b.claims_active = true;
  EXPECT_EQ(elect({a, b}, {}, std::nullopt).winner, "lb2");
  EXPECT_EQ(elect({b, a}, {}, std::nullopt).winner, "lb2") << "order does not matter";
}

TEST(Election, AnOperatorMoveWinsWhenTheTargetIsEligible) {
  Candidate a = node("lb1", 200), b = node("lb2", 100);
  a.claims_active = true;
  EXPECT_EQ(elect({a, b}, {}, std::string("lb2")).winner, "lb2");
  b.standby = true;
  EXPECT_EQ(elect({a, b}, {}, std::string("lb2")).winner, "lb1");
  EXPECT_EQ(elect({a, b}, {}, std::string("nosuch")).winner, "lb1");
}

}  // namespace
}  // namespace tandem::election
