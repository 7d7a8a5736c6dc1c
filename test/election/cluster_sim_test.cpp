// Simulated clusters of two and three nodes on simulated time: start, crash, restart, power
// loss, partition and heal, flapping health, failback policies, admin moves and fencing.
#include "cluster_sim.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "../wire/wire_test_util.h"

namespace tandem::election {
namespace {

using namespace std::chrono_literals;
using config::FailbackPolicy;
using sim::SimCluster;

using Names = std::vector<std::string>;

SimCluster pair(SimCluster::Options opt = {}) {
  return SimCluster({{"lb1", 200}, {"lb2", 100}}, opt);
}

bool exactlyOneActive(SimCluster& c, const std::string& who) {
  return c.activeNodes() == Names{who} && c.holders() == Names{who};
}

TEST(ClusterSim, PairStartsWithExactlyOneActiveThePreferredOne) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  auto t = c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 5s);
  ASSERT_TRUE(t) << "no single ACTIVE within 5 s";
  c.advance(10s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
  EXPECT_EQ(c.role("lb2"), Role::kBackup);
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
  EXPECT_EQ(c.node("lb1").starts, 1);
}

TEST(ClusterSim, DaemonCrashWithImmediateRestartCausesNoTakeover) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  ASSERT_TRUE(exactlyOneActive(c, "lb1"));
  c.crash("lb1");
  c.advance(300ms);  // systemd restarts it at once
  c.start("lb1");
  c.advance(10s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
  EXPECT_EQ(c.node("lb1").starts, 2) << "the resume starts them again, adopting what is there";
  EXPECT_EQ(c.node("lb1").stops, 0) << "the restart never released";
  EXPECT_EQ(c.node("lb2").starts, 0) << "the peer never took over";
}

// lb1 ACTIVE, killed, restarted at once; its votequorum does not answer until the test says so.
void restartTheActiveWithVotequorumSilent(SimCluster& c) {
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  ASSERT_TRUE(exactlyOneActive(c, "lb1"));
  c.crash("lb1");
  c.advance(300ms);
  c.quorumSilentAtStart(true);
  c.start("lb1");
}

// Seen in CI at the fast profile: the restarted daemon heard its peer before votequorum's first
// answer, resumed, found the quorum unknown and released; the peer took over, and the service
// moved twice for a restart that should have moved nothing.
TEST(ClusterSim, ARestartedActiveWaitsForVotequorumsFirstAnswerInsteadOfReleasing) {
  SimCluster c = pair();
  ASSERT_NO_FATAL_FAILURE(restartTheActiveWithVotequorumSilent(c));
  c.advance(1500ms);  // past dead_time: lb2's heartbeats have long arrived, votequorum has not
  EXPECT_EQ(c.role("lb1"), Role::kInit) << "it waits, holding what it held";
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onQuorum(when, true); });
  c.advance(10s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
  EXPECT_EQ(c.node("lb1").stops, 0) << "it never released";
  EXPECT_EQ(c.node("lb2").starts, 0) << "the peer never took over";
}

TEST(ClusterSim, ARestartedActiveThatVotequorumNeverAnswersReleasesAfterQuorumHold) {
  SimCluster c = pair();
  ASSERT_NO_FATAL_FAILURE(restartTheActiveWithVotequorumSilent(c));
  c.advance(7900ms);
  EXPECT_EQ(c.role("lb1"), Role::kInit);
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 3s));
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

TEST(ClusterSim, DaemonCrashWithoutRestartIsTakenOverAfterDeadTime) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.crash("lb1");
  auto t = c.advanceUntil([&] { return c.role("lb2") == Role::kActive; }, 5s);
  ASSERT_TRUE(t);
  // The leave is seen at once; dead_time runs from it, then the resources start (20 ms).
  EXPECT_GE(*t, 1000ms);
  EXPECT_LE(*t, 1000ms + 200ms);
  EXPECT_EQ(c.holders(), (Names{"lb1", "lb2"})) << "the crashed node's kernel still holds";
  // Its daemon returns: it sees lb2 ACTIVE and releases what it still holds.
  c.start("lb1");
  c.advance(3s);
  EXPECT_TRUE(exactlyOneActive(c, "lb2"));
  EXPECT_EQ(c.node("lb1").stops, 1);
}

TEST(ClusterSim, LinkCutIsTakenOverWithinDeadTimeAndHealsToOneActive) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.partition({"lb1"});
  auto t = c.advanceUntil([&] { return c.role("lb2") == Role::kActive; }, 5s);
  ASSERT_TRUE(t);
  EXPECT_LE(*t, 1000ms + 200ms + 20ms);
  EXPECT_EQ(c.activeNodes(), (Names{"lb1", "lb2"})) << "both halves are alone: split brain";
  c.heal();
  auto healed =
      c.advanceUntil([&] { return c.activeNodes().size() == 1 && c.holders().size() == 1; }, 5s);
  ASSERT_TRUE(healed);
  EXPECT_LE(*healed, 200ms + 20ms + 10ms) << "one releases within one heartbeat";
  EXPECT_EQ(c.activeNodes(), Names{"lb1"}) << "the better ranked holder keeps the resources";
  c.advance(100ms);  // the loser's release confirmation
  EXPECT_GE(c.node("lb1").reannounces, 1) << "the winner announces again after the heal";
}

TEST(ClusterSim, PowerLossWithFencingFencesBeforeTakingOver) {
  SimCluster::Options opt;
  opt.fencing = true;
  SimCluster c = pair(opt);
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.partition({"lb1"});  // lb2 cannot tell a dead peer from a cut link
  ASSERT_TRUE(c.advanceUntil([&] { return c.role("lb2") == Role::kActive; }, 5s));
  EXPECT_EQ(c.node("lb2").fences, 1);
  EXPECT_EQ(c.holders(), Names{"lb2"}) << "the fence powered lb1 off before lb2 took over";
}

TEST(ClusterSim, FailedFenceBlocksTheTakeoverAndRaisesAnAlarm) {
  SimCluster::Options opt;
  opt.fencing = true;
  SimCluster c = pair(opt);
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.node("lb2").fence_works = false;
  c.partition({"lb1"});
  c.advance(10s);
  EXPECT_EQ(c.role("lb2"), Role::kBackup);
  EXPECT_EQ(c.node("lb2").starts, 0);
  EXPECT_EQ(c.node("lb2").alarms, 1);
  EXPECT_EQ(c.node("lb2").fences, 1) << "no retry storm";
  c.heal();  // the peer returns: the block lifts, and lb1 kept the service all along
  c.advance(3s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
}

TEST(ClusterSim, ManualFailbackKeepsTheSurvivorActive) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.crash("lb1");
  c.node("lb1").held = false;  // say the host rebooted
  c.node("lb1").persisted_role = "INIT";
  c.advance(3s);
  ASSERT_TRUE(exactlyOneActive(c, "lb2"));
  c.start("lb1");
  c.advance(60s);
  EXPECT_TRUE(exactlyOneActive(c, "lb2")) << "manual: the preferred node stays BACKUP";
  EXPECT_EQ(c.role("lb1"), Role::kBackup);
}

TEST(ClusterSim, AutoFailbackWaitsForTheDelayThenHandsOverCleanly) {
  SimCluster::Options opt;
  opt.policy = Policy{FailbackPolicy::kAuto, 30s};
  SimCluster c = pair(opt);
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.powerOff("lb1", 2200ms);
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 5s));
  c.start("lb1");
  Time back = c.now();
  auto t = c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 60s);
  ASSERT_TRUE(t);
  EXPECT_GE(c.now() - back, 30s) << "not before failback_delay";
  EXPECT_LE(c.now() - back, 30s + 2s);
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1) << "the old ACTIVE released before the new one took over";
}

void setSync(SimCluster& c, const std::string& node, uint64_t connections, bool backup,
             uint64_t templates = 0, std::optional<int64_t> heard_ago_ms = std::nullopt) {
  const SyncReport sync{connections, templates, backup, heard_ago_ms};
  c.act(node, [sync](ClusterCore& core, Time when) { return core.onSyncState(when, sync); });
}

SimCluster::Options syncFailback(Millis max_wait) {
  SimCluster::Options opt;
  opt.policy = Policy{FailbackPolicy::kAuto, 5s};
  opt.policy.sync_aware = true;
  opt.policy.sync_settle = 10s;
  opt.policy.sync_min_share = 0.8;
  opt.policy.sync_max_wait = max_wait;
  return opt;
}

// lb1 (preferred) fails, lb2 takes over and reports 1000 connections, lb1 starts again.
void failAndReturnLb1(SimCluster& c) {
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.powerOff("lb1", 2200ms);
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 5s));
  setSync(c, "lb2", 1000, true);
  c.start("lb1");
}

TEST(ClusterSim, SyncAwareFailbackWaitsForTheReturningNodesTable) {
  SimCluster c = pair(syncFailback(2min));
  ASSERT_NO_FATAL_FAILURE(failAndReturnLb1(c));
  const Time back = c.now();
  setSync(c, "lb1", 0, true);  // its backup daemon starts with an empty table
  c.advance(12s);              // past failback_delay and sync_settle
  EXPECT_TRUE(exactlyOneActive(c, "lb2")) << "lb1's table is empty";
  const std::string waiting = c.node("lb2").core->status(c.now()).failback_waiting;
  EXPECT_EQ(waiting,
            "failback to lb1 waits for its connection table: 0 of lb2's 1000 connections, "
            "wants 80%");
  EXPECT_EQ(c.node("lb1").core->status(c.now()).failback_waiting, waiting)
      << "both sides see the same wait, from the same heartbeats";
  const auto lb1 = c.node("lb1").core->status(c.now()).nodes;
  ASSERT_EQ(lb1.size(), 2u);
  EXPECT_EQ(lb1[1].name, "lb2");
  EXPECT_EQ(lb1[1].connections, 1000u) << "carried by lb2's heartbeats";
  setSync(c, "lb1", 850, true);
  const Time caught_up = c.now();
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 5s));
  EXPECT_LE(c.now() - caught_up, 2s) << "within a heartbeat or two of the table catching up";
  EXPECT_GE(c.now() - back, 12s);
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
  EXPECT_EQ(c.node("lb1").core->status(c.now()).failback_waiting, "");
}

size_t linesWith(const std::vector<std::string>& log, const std::string& text) {
  return static_cast<size_t>(std::count_if(log.begin(), log.end(), [&](const std::string& l) {
    return l.find(text) != std::string::npos;
  }));
}

TEST(ClusterSim, AHeldBackFailbackIsLoggedOnceWhenItStartsAndOnceWhenItEnds) {
  SimCluster c = pair(syncFailback(2min));
  ASSERT_NO_FATAL_FAILURE(failAndReturnLb1(c));
  c.log.clear();
  setSync(c, "lb1", 0, true);
  // What it waits for changes at every election: the backup daemon's run so far, then the table.
  c.advance(5s);
  const std::string first = c.node("lb2").core->status(c.now()).failback_waiting;
  c.advance(7s);
  ASSERT_NE(c.node("lb2").core->status(c.now()).failback_waiting, first);
  setSync(c, "lb1", 400, true);
  c.advance(3s);
  ASSERT_TRUE(exactlyOneActive(c, "lb2"));
  for (const std::string node : {"lb1", "lb2"}) {
    EXPECT_EQ(linesWith(c.log, node + ": log connection sync holds back a failback node=" + node),
              1u)
        << node;
  }
  EXPECT_EQ(linesWith(c.log, "no longer holds back"), 0u) << "it still waits";
  setSync(c, "lb1", 850, true);
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 5s));
  c.advance(5s);
  for (const std::string node : {"lb1", "lb2"}) {
    EXPECT_EQ(linesWith(c.log, node + ": log connection sync holds back a failback"), 1u) << node;
    EXPECT_EQ(
        linesWith(c.log,
                  node + ": log connection sync no longer holds back a failback node=" + node),
        1u)
        << node;
  }
}

TEST(ClusterSim, EachNodeSeesThePeersTemplatesAndWhenItsBackupLastHeardTheMaster) {
  SimCluster c = pair(syncFailback(2min));
  c.start("lb1");
  c.start("lb2");
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 10s));
  setSync(c, "lb1", 900, true, 40);                // the ACTIVE's backup hears nobody
  setSync(c, "lb2", 880, true, 38, int64_t{300});  // lb2's heard lb1 300 ms ago
  c.advance(1s);
  const auto seen_by_lb1 = c.node("lb1").core->status(c.now()).nodes;
  ASSERT_EQ(seen_by_lb1.size(), 2u);
  EXPECT_EQ(seen_by_lb1[0].templates, 40u) << "self";
  EXPECT_EQ(seen_by_lb1[0].sync_heard_ms, std::nullopt);
  EXPECT_EQ(seen_by_lb1[1].name, "lb2");
  EXPECT_EQ(seen_by_lb1[1].connections, 880u);
  EXPECT_EQ(seen_by_lb1[1].templates, 38u) << "carried by lb2's heartbeats";
  // 300 ms before the report, a second ago: its age now, less the heartbeat's transit.
  ASSERT_TRUE(seen_by_lb1[1].sync_heard_ms);
  EXPECT_LE(*seen_by_lb1[1].sync_heard_ms, 1300);
  EXPECT_GE(*seen_by_lb1[1].sync_heard_ms, 1300 - 100);
  const auto seen_by_lb2 = c.node("lb2").core->status(c.now()).nodes;
  EXPECT_EQ(seen_by_lb2[0].sync_heard_ms, 1300) << "its own, exact";
  EXPECT_EQ(seen_by_lb2[1].templates, 40u);
  EXPECT_EQ(seen_by_lb2[1].sync_heard_ms, std::nullopt) << "none heard travels as none";
}

TEST(ClusterSim, SyncAwareFailbackGoesAheadAtTheCeiling) {
  SimCluster c = pair(syncFailback(30s));
  ASSERT_NO_FATAL_FAILURE(failAndReturnLb1(c));
  const Time back = c.now();
  setSync(c, "lb1", 0, false);  // its backup daemon never runs
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 60s));
  EXPECT_GE(c.now() - back, 35s) << "failback_delay + sync_max_wait";
  EXPECT_LE(c.now() - back, 35s + 2s);
}

void setHealth(SimCluster& c, const std::string& node, int health) {
  c.act(node,
        [health](ClusterCore& core, Time when) { return core.onLocalHealth(when, health, true); });
}

SimCluster::Options settleOptions() {
  SimCluster::Options opt;
  opt.policy = Policy{FailbackPolicy::kManual, 0ms, 1500ms};
  return opt;
}

void startWithLb1Active(SimCluster& c) {
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  ASSERT_TRUE(exactlyOneActive(c, "lb1"));
}

// One real server dies and comes back; each node's checks see it up to a check period apart
// (here 1 s, the settle 1.5 s): whichever sees it first, the service never moves.
TEST(ClusterSim, ARealServerFailureBothNodesSeeMovesNothing) {
  SimCluster c = pair(settleOptions());
  ASSERT_NO_FATAL_FAILURE(startWithLb1Active(c));
  auto hold = [&](Millis d) {
    for (Millis t{0}; t < d; t += 10ms) {
      c.advance(10ms);
      ASSERT_TRUE(exactlyOneActive(c, "lb1")) << "moved at +" << t.count() << " ms";
    }
  };
  setHealth(c, "lb1", kHealthNoRealServer);  // the holder sees the failure first
  hold(1s);
  setHealth(c, "lb2", kHealthNoRealServer);
  hold(5s);
  setHealth(c, "lb2", 1000);  // the backup sees the recovery first
  hold(1s);
  setHealth(c, "lb1", 1000);
  hold(5s);
}

TEST(ClusterSim, AHolderThatStaysBlindHandsOverOnceTheSettlePasses) {
  SimCluster c = pair(settleOptions());
  ASSERT_NO_FATAL_FAILURE(startWithLb1Active(c));
  setHealth(c, "lb1", kHealthNoRealServer);
  auto t = c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 5s);
  ASSERT_TRUE(t) << "lb2 sees the real servers, lb1 does not: lb2 must take over";
  EXPECT_GE(*t, 1500ms) << "not before the settle";
  EXPECT_LE(*t, 1500ms + 500ms);
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

Heartbeat backupBeat(const std::string& sender, uint16_t health) {
  Heartbeat hb;
  hb.sender = sender;
  hb.incarnation = 1;
  hb.role = wire::Role::kBackup;
  hb.priority = 100;
  hb.health = health;
  hb.quorate = true;
  hb.tiebreaker_ok = true;
  return hb;
}

Heartbeat activeBeat(const std::string& sender) {
  Heartbeat hb = backupBeat(sender, 1000);
  hb.role = wire::Role::kActive;
  hb.priority = 200;
  return hb;
}

bool has(const Actions& actions, Action::Kind kind) {
  return std::any_of(actions.begin(), actions.end(),
                     [kind](const Action& a) { return a.kind == kind; });
}

// The settle passing is no event: the core asks for a tick at that moment, and the tick alone,
// with no heartbeat in between, makes the holder give way.
TEST(ClusterCoreSettle, TheSettlePassingIsADeadlineOfItsOwn) {
  CoreConfig cfg;
  cfg.self = "lb1";
  cfg.priority = 200;
  cfg.peers = {{"lb2", 100}};
  cfg.dead_time = 1s;
  cfg.policy.health_settle = 300ms;
  Time t0{};
  ClusterCore core(cfg, t0, {});
  core.onQuorum(t0, true);
  core.onHeartbeat(t0, backupBeat("lb2", 1000));
  ASSERT_EQ(core.role(), Role::kTakingOver);
  core.onResourcesStarted(t0);
  ASSERT_EQ(core.role(), Role::kActive);
  EXPECT_EQ(core.nextDeadline(), t0 + 300ms) << "both health sides settle then";
  EXPECT_FALSE(has(core.onTick(t0 + 300ms), Action::Kind::kStopResources));
  EXPECT_EQ(core.nextDeadline(), t0 + 1s) << "nothing left to settle: lb2's dead time";
  Time t1 = t0 + 500ms;
  core.onHeartbeat(t1, backupBeat("lb2", 1000));
  EXPECT_FALSE(has(core.onLocalHealth(t1, kHealthNoRealServer, true), Action::Kind::kStopResources))
      << "the disagreement has only begun";
  EXPECT_EQ(core.nextDeadline(), t1 + 300ms);
  EXPECT_FALSE(has(core.onTick(t1 + 299ms), Action::Kind::kStopResources));
  EXPECT_TRUE(has(core.onTick(t1 + 300ms), Action::Kind::kStopResources));
  EXPECT_EQ(core.role(), Role::kReleasing);
}

// Each role change is an action of its own, with its cause and epoch, ahead of the resources it
// starts or stops: whoever acts on role changes (the notify hooks) sees TAKING_OVER before the
// VIPs are added, however fast the resources answer.
TEST(ClusterCoreRoleChange, EachChangeIsToldWithItsCauseBeforeItsResourcesMove) {
  CoreConfig cfg;
  cfg.self = "lb1";
  cfg.priority = 200;
  cfg.peers = {{"lb2", 100}};
  Time t0{};
  ClusterCore core(cfg, t0, {});
  core.onQuorum(t0, true);
  Actions a = core.onHeartbeat(t0, backupBeat("lb2", 1000));
  std::vector<RoleChange> changes;
  size_t change_at = a.size(), start_at = a.size();
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind == Action::Kind::kRoleChanged) {
      ASSERT_TRUE(a[i].change);
      changes.push_back(*a[i].change);
      change_at = i;
    }
    if (a[i].kind == Action::Kind::kStartResources) start_at = i;
  }
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].from, Role::kInit);
  EXPECT_EQ(changes[0].to, Role::kBackup);
  EXPECT_EQ(changes[0].event, RoleEvent::kInitDone);
  EXPECT_EQ(changes[1].from, Role::kBackup);
  EXPECT_EQ(changes[1].to, Role::kTakingOver);
  EXPECT_EQ(changes[1].event, RoleEvent::kElected);
  EXPECT_EQ(changes[1].reason, core.lastReason());
  EXPECT_EQ(changes[1].epoch, core.heartbeat().epoch);
  EXPECT_LT(change_at, start_at);
  Actions started = core.onResourcesStarted(t0);
  auto it = std::find_if(started.begin(), started.end(),
                         [](const Action& x) { return x.kind == Action::Kind::kRoleChanged; });
  ASSERT_NE(it, started.end());
  EXPECT_EQ(*it->change, (RoleChange{Role::kTakingOver, Role::kActive, RoleEvent::kResourcesStarted,
                                     core.lastReason(), core.heartbeat().epoch}));
}

// A BACKUP that is not the preferred node under auto failback: once its failback delay has
// passed there is nothing to wake for until the next heartbeat or the peer's dead time, not a
// deadline in the past every millisecond.
TEST(ClusterCoreDeadline, APassedFailbackDelayIsNoDeadline) {
  CoreConfig cfg;
  cfg.self = "lb2";
  cfg.priority = 100;
  cfg.peers = {{"lb1", 200}};
  cfg.dead_time = 1s;
  cfg.policy.failback = config::FailbackPolicy::kAuto;
  cfg.policy.failback_delay = 0ms;
  Time t0{};
  ClusterCore core(cfg, t0, {});
  core.onQuorum(t0, true);
  core.onHeartbeat(t0, activeBeat("lb1"));
  core.onTick(t0 + 100ms);
  ASSERT_EQ(core.role(), Role::kBackup);
  const Time t1 = t0 + 500ms;
  core.onHeartbeat(t1, activeBeat("lb1"));
  core.onTick(t1);
  auto next = core.nextDeadline();
  ASSERT_TRUE(next.has_value());
  EXPECT_GT(*next, t1) << "a deadline in the past makes the shell tick every millisecond";
}

TEST(ClusterSim, AdminMoveIsAHandshakeAndClearKeepsThePlace) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMove(when, "lb2", 1); });
  auto t = c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 5s);
  ASSERT_TRUE(t);
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1) << "old removed before new added";
  c.act("lb2", [](ClusterCore& core, Time when) { return core.onMove(when, "", 2); });
  c.advance(10s);
  EXPECT_TRUE(exactlyOneActive(c, "lb2")) << "clearing the move does not move back (manual)";
}

// Issue 12: a release's target is honoured. With three directors the one named takes over,
// not the next by priority, and nobody else ever holds the resources on the way.
TEST(ClusterSim, AMoveToTheLowestPriorityGoesThereAndNowhereElse) {
  SimCluster c({{"lb1", 200}, {"lb2", 150}, {"lb3", 100}}, {});
  c.start("lb1");
  c.start("lb2");
  c.start("lb3");
  c.advance(5s);
  ASSERT_TRUE(exactlyOneActive(c, "lb1"));
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMove(when, "lb3", 1); });
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb3"); }, 5s));
  c.advance(10s);
  EXPECT_TRUE(exactlyOneActive(c, "lb3"));
  EXPECT_EQ(c.node("lb2").starts, 0) << "the next by priority never took it";
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

TEST(ClusterSim, StandbyHandsOverAndOnlineDoesNotTakeBack) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onStandby(when, true); });
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 5s));
  EXPECT_EQ(c.role("lb1"), Role::kStandby);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onStandby(when, false); });
  c.advance(5s);
  EXPECT_EQ(c.role("lb1"), Role::kBackup);
  EXPECT_TRUE(exactlyOneActive(c, "lb2"));
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

// Issue 13: maintenance mode, set on one node, holds on every node; nothing is started or
// stopped while it lasts, whatever happens, and a restarted daemon resumes what it held.
TEST(ClusterSim, MaintenanceFreezesTheServicesThroughACrashAndARestart) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  ASSERT_TRUE(exactlyOneActive(c, "lb1"));
  c.act("lb2", [](ClusterCore& core, Time when) { return core.onMaintenance(when, true, 10); });
  c.advance(1s);
  EXPECT_TRUE(c.node("lb1").core->status(c.now()).maintenance) << "lb2's heartbeat carried it";
  EXPECT_EQ(c.node("lb1").persisted_maintenance, "on 10");
  EXPECT_EQ(c.node("lb2").persisted_maintenance, "on 10");
  const int starts = c.node("lb2").starts;
  c.crash("lb1");
  c.advance(10s);
  EXPECT_EQ(c.node("lb2").starts, starts) << "a BACKUP in maintenance took over";
  EXPECT_EQ(c.role("lb2"), Role::kBackup);
  EXPECT_EQ(c.holders(), Names{"lb1"}) << "the crashed daemon's resources stay in place";
  c.start("lb1");  // the restarted daemon reads "on 10" back
  c.advance(5s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
  EXPECT_EQ(c.node("lb1").stops, 0) << "nothing was released";
  // A standby asked for in maintenance waits for its end.
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onStandby(when, true); });
  c.advance(5s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMaintenance(when, false, 11); });
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 5s))
      << "maintenance off: the standby takes effect";
  EXPECT_FALSE(c.node("lb2").core->status(c.now()).maintenance);
  EXPECT_EQ(c.node("lb2").persisted_maintenance, "off 11");
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

// The restarted daemon knows maintenance from its own file, not from a peer's heartbeat.
TEST(ClusterSim, MaintenanceIsReadBackByADaemonRestartedAlone) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMaintenance(when, true, 7); });
  c.advance(1s);
  c.crash("lb2");
  c.crash("lb1");
  c.start("lb1");  // nobody to hear it from
  c.advance(3s);
  EXPECT_TRUE(c.node("lb1").core->status(c.now()).maintenance);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
  EXPECT_EQ(c.node("lb1").stops, 0);
}

// Maintenance means the operator works on the resources: one that fails is not released (no
// peer would take over: the services would just be down); it is dealt with when it ends.
TEST(ClusterSim, AResourceFailureInMaintenanceStopsNothingUntilItEnds) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMaintenance(when, true, 3); });
  c.advance(1s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onResourceFailed(when, "vip"); });
  c.advance(5s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
  EXPECT_EQ(c.node("lb1").stops, 0);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMaintenance(when, false, 4); });
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 5s))
      << "the failure was forgotten when maintenance ended";
}

// A takeover slower than the move's timeout is still the move succeeding: the target holds it
// from TAKING_OVER on. Before, the target dropped its own move mid-takeover while the old
// ACTIVE kept it, and each waited for the other: nobody ACTIVE.
TEST(ClusterSim, AMoveWhoseTakeoverOutlastsTheTimeoutStillSucceeds) {
  SimCluster::Options opt;
  opt.policy.failback = FailbackPolicy::kAuto;
  opt.resource_time = 6s;  // release 6 s, then take over 6 s: past the 10 s timeout
  SimCluster c = pair(opt);
  c.start("lb1");
  c.start("lb2");
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 30s));
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMove(when, "lb2", 1); });
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 40s));
  c.advance(30s);
  EXPECT_TRUE(exactlyOneActive(c, "lb2"));
  EXPECT_EQ(c.node("lb1").core->status(c.now()).move_target, "lb2");
  EXPECT_EQ(c.node("lb2").core->status(c.now()).move_target, "lb2");
}

// A release alone past the timeout: the move fails, and every node drops it together (a newer
// generation without a target), so the election goes on as without it: one ACTIVE, not none.
// A guard: in this symmetric case the nodes' own timers agree even without the generation.
TEST(ClusterSim, AMoveThatFailsMidHandoverIsDroppedEverywhereAtOnce) {
  SimCluster::Options opt;
  opt.policy.failback = FailbackPolicy::kAuto;
  opt.resource_time = 12s;
  SimCluster c = pair(opt);
  c.start("lb1");
  c.start("lb2");
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 30s));
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMove(when, "lb2", 1); });
  c.advance(60s);
  EXPECT_EQ(c.activeNodes().size(), 1u);
  EXPECT_EQ(c.holders().size(), 1u);
  EXPECT_EQ(c.node("lb1").core->status(c.now()).move_target, "");
  EXPECT_EQ(c.node("lb2").core->status(c.now()).move_target, "");
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

TEST(ClusterSim, AnOlderMaintenanceRequestLosesToANewerOne) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMaintenance(when, true, 20); });
  c.act("lb2", [](ClusterCore& core, Time when) { return core.onMaintenance(when, false, 19); });
  c.advance(2s);
  EXPECT_TRUE(c.node("lb1").core->status(c.now()).maintenance);
  EXPECT_TRUE(c.node("lb2").core->status(c.now()).maintenance);
}

TEST(ClusterSim, MaintenanceLeavesResourcesFoundAtStartWhereTheyAre) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMaintenance(when, true, 5); });
  c.advance(1s);
  c.crash("lb2");
  c.node("lb2").held = true;  // e.g. an operator added the VIP by hand during maintenance
  c.start("lb2");
  c.advance(5s);
  EXPECT_EQ(c.role("lb2"), Role::kInit) << "releasing them would be acting on them";
  EXPECT_EQ(c.node("lb2").stops, 0);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMaintenance(when, false, 6); });
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 5s));
  EXPECT_EQ(c.role("lb2"), Role::kBackup);
  EXPECT_EQ(c.node("lb2").stops, 1) << "released once maintenance ended";
}

TEST(ClusterSim, AStandbyWithALifetimeEndsByItself) {
  SimCluster::Options opt;
  opt.policy.failback = FailbackPolicy::kAuto;
  SimCluster c = pair(opt);
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onStandby(when, true, 8s); });
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 3s));
  EXPECT_EQ(c.role("lb1"), Role::kStandby);
  auto left = c.node("lb1").core->status(c.now()).standby_left_ms;
  ASSERT_TRUE(left.has_value());
  EXPECT_GT(*left, 5000);
  EXPECT_LE(*left, 8000);
  c.advance(4s);
  EXPECT_EQ(c.role("lb1"), Role::kStandby) << "ended before its lifetime";
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 6s))
      << "the standby did not end, or lb1 did not fail back after it";
  EXPECT_FALSE(c.node("lb1").core->status(c.now()).standby_left_ms.has_value());
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

TEST(ClusterSim, AMoveWithALifetimeEndsOnEveryNodeEvenIfItsAuthorIsGone) {
  SimCluster::Options opt;
  opt.policy.failback = FailbackPolicy::kAuto;
  SimCluster c({{"lb1", 200}, {"lb2", 150}, {"lb3", 100}}, opt);
  c.start("lb1");
  c.start("lb2");
  c.start("lb3");
  c.advance(5s);
  c.act("lb3", [](ClusterCore& core, Time when) { return core.onMove(when, "lb2", 1, 10s); });
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 5s));
  c.crash("lb3");  // the node that asked for it is not needed for it to end
  c.advance(3s);
  // A daemon that starts during the lifetime adopts what is left of it, not all of it.
  c.crash("lb1");
  c.start("lb1");
  c.advance(1s);
  auto left = c.node("lb1").core->status(c.now()).move_left_ms;
  ASSERT_TRUE(left.has_value());
  EXPECT_LT(*left, 7000);
  EXPECT_EQ(c.node("lb1").core->status(c.now()).move_target, "lb2");
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 10s))
      << "the move did not end, or lb1 did not fail back after it";
  EXPECT_EQ(c.node("lb2").core->status(c.now()).move_target, "");
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

// Issue 13: "a move that fails leaves no constraint behind". Without the timeout, lb2 would
// take the services the moment it is healthy again, long after the operator gave up.
TEST(ClusterSim, AMoveWhoseTargetCannotTakeOverIsDroppedEverywhere) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.act("lb2", [](ClusterCore& core, Time when) { return core.onLocalHealth(when, 0, true); });
  c.advance(1s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMove(when, "lb2", 1); });
  c.advance(5s);
  EXPECT_EQ(c.node("lb1").core->status(c.now()).move_target, "lb2") << "dropped too early";
  c.advance(6s);
  EXPECT_EQ(c.node("lb1").core->status(c.now()).move_target, "");
  EXPECT_EQ(c.node("lb2").core->status(c.now()).move_target, "");
  c.act("lb2", [](ClusterCore& core, Time when) { return core.onLocalHealth(when, 1000, true); });
  c.advance(10s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1")) << "the failed move pulled the services later";
  EXPECT_EQ(c.node("lb2").starts, 0);
}

TEST(ClusterSim, AMoveThatSucceededStaysInForce) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onMove(when, "lb2", 1); });
  c.advance(30s);
  EXPECT_TRUE(exactlyOneActive(c, "lb2"));
  EXPECT_EQ(c.node("lb1").core->status(c.now()).move_target, "lb2");
  EXPECT_EQ(c.node("lb2").core->status(c.now()).move_target, "lb2");
}

TEST(ClusterSim, FlappingHealthMovesTheServiceWithoutEverDoublingIt) {
  SimCluster c({{"lb1", 200}, {"lb2", 150}, {"lb3", 100}}, {});
  c.start("lb1");
  c.start("lb2");
  c.start("lb3");
  c.advance(5s);
  ASSERT_TRUE(exactlyOneActive(c, "lb1"));
  for (int i = 0; i < 10; ++i) {
    std::string sick = i % 2 == 0 ? "lb1" : "lb2";
    for (std::string n : {"lb1", "lb2", "lb3"}) {
      int health = n == sick ? 0 : 1000;
      c.act(n, [health](ClusterCore& core, Time when) {
        return core.onLocalHealth(when, health, true);
      });
    }
    c.advance(3s);
    EXPECT_EQ(c.activeNodes().size(), 1u) << "round " << i;
    EXPECT_NE(c.activeNodes().front(), sick) << "round " << i;
  }
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

TEST(ClusterSim, ThreeNodesPartitionAndHeal) {
  SimCluster c({{"lb1", 200}, {"lb2", 150}, {"lb3", 100}}, {});
  for (auto n : {"lb1", "lb2", "lb3"}) c.start(n);
  c.advance(5s);
  ASSERT_TRUE(exactlyOneActive(c, "lb1"));
  c.partition({"lb1"});
  ASSERT_TRUE(c.advanceUntil([&] { return c.role("lb2") == Role::kActive; }, 5s));
  EXPECT_EQ(c.role("lb3"), Role::kBackup) << "one ACTIVE per side";
  c.heal();
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb1"); }, 5s));
  c.advance(5s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
}

TEST(ClusterSim, TiebreakerLossReleasesAndTheOtherSideTakesOver) {
  SimCluster c = pair();
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onLocalHealth(when, 1000, false); });
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 5s));
  EXPECT_EQ(c.role("lb1"), Role::kFault);
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

}  // namespace
}  // namespace tandem::election

namespace tandem::election {
namespace {

// Issue 12: quorum is unknown, not true, until votequorum answers. A lone node that cannot
// reach votequorum at boot stays out of the election, however long it waits; its first answer
// lets it in.
TEST(ClusterSim, ANodeThatVotequorumNeverAnsweredDoesNotBecomeActive) {
  sim::SimCluster::Options opt;
  opt.quorum_silent = true;
  sim::SimCluster c({{"lb1", 200}}, opt);
  c.start("lb1");
  c.advance(std::chrono::seconds(10));
  EXPECT_TRUE(c.activeNodes().empty());
  EXPECT_EQ(c.role("lb1"), Role::kFault);
  EXPECT_EQ(c.node("lb1").starts, 0);
  EXPECT_EQ(c.node("lb1").core->status(c.now()).quorate, std::nullopt) << "unknown, not false";
  EXPECT_FALSE(c.node("lb1").core->heartbeat().quorate) << "peers hear no quorum";
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onQuorum(when, true); });
  c.advance(std::chrono::seconds(3));
  EXPECT_EQ(c.activeNodes(), std::vector<std::string>{"lb1"});
  EXPECT_EQ(c.node("lb1").core->status(c.now()).quorate, std::optional<bool>(true));
}

// no_quorum_policy = "ignore": a pair without votequorum acts as though quorate, and a
// "not quorate" answer changes nothing either.
TEST(ClusterSim, UnderTheIgnorePolicyNoQuorumAnswerIsNeeded) {
  sim::SimCluster::Options opt;
  opt.quorum_silent = true;
  opt.ignore_quorum = true;
  sim::SimCluster c({{"lb1", 200}, {"lb2", 100}}, opt);
  c.start("lb1");
  c.start("lb2");
  c.advance(std::chrono::seconds(5));
  EXPECT_EQ(c.activeNodes(), std::vector<std::string>{"lb1"});
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onQuorum(when, false); });
  c.advance(std::chrono::seconds(3));
  EXPECT_EQ(c.activeNodes(), std::vector<std::string>{"lb1"});
  EXPECT_EQ(c.node("lb1").starts, 1) << "no role change";
}

TEST(ClusterSim, QuorumGainedTogetherStillElectsThePreferredNode) {
  sim::SimCluster c({{"lb1", 200}, {"lb2", 100}}, {});
  c.start("lb1");
  c.start("lb2");
  for (std::string n : {"lb1", "lb2"}) {
    c.act(n, [](ClusterCore& core, Time when) { return core.onQuorum(when, false); });
  }
  c.advance(std::chrono::seconds(3));
  // Both learn of quorum at the same instant; lb2 hears first that lb1 is still in FAULT.
  c.act("lb2", [](ClusterCore& core, Time when) { return core.onQuorum(when, true); });
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onQuorum(when, true); });
  c.advance(std::chrono::seconds(5));
  EXPECT_EQ(c.activeNodes(), std::vector<std::string>{"lb1"});
  EXPECT_EQ(c.node("lb2").starts, 0) << "lb2 did not grab the service in between";
}

}  // namespace
}  // namespace tandem::election

namespace tandem::election {
namespace {

TEST(ClusterSim, AMembershipChangeAloneNeverCausesATakeover) {
  // The ring drops lb1 (a stall, a stale change, one ring link) while its heartbeats arrive.
  sim::SimCluster c({{"lb1", 200}, {"lb2", 100}}, {});
  c.start("lb1");
  c.start("lb2");
  c.advance(std::chrono::seconds(5));
  c.act("lb2", [](ClusterCore& core, Time when) { return core.onNodeLeft(when, "lb1"); });
  c.advance(std::chrono::seconds(5));
  EXPECT_EQ(c.activeNodes(), std::vector<std::string>{"lb1"});
  EXPECT_EQ(c.node("lb2").starts, 0);
}

TEST(ClusterSim, AMembershipChangeNeverShortensDeadTime) {
  // The ring's verdict may be about a cut that has already healed: it starts no takeover while
  // the peer is within its dead_time, and the heartbeats' silence decides.
  sim::SimCluster c({{"lb1", 200}, {"lb2", 100}}, {});
  c.start("lb1");
  c.start("lb2");
  c.advance(std::chrono::seconds(5));
  c.partition({"lb1"});
  c.advance(std::chrono::milliseconds(500));  // heartbeats stopped 500 ms ago
  c.act("lb2", [](ClusterCore& core, Time when) { return core.onNodeLeft(when, "lb1"); });
  c.advance(std::chrono::milliseconds(100));
  EXPECT_EQ(c.role("lb2"), Role::kBackup) << "600 ms of silence is within dead_time (1 s)";
  c.advance(std::chrono::milliseconds(600));
  EXPECT_EQ(c.role("lb2"), Role::kActive) << "dead_time decided";
}

}  // namespace
}  // namespace tandem::election

namespace tandem::election {
namespace {

// A partition heals the other way round from the sim's: the peer that took over hears this
// ACTIVE first and releases before this one ever sees it hold. Its announcements have still
// moved the neighbours' caches (seen in the VM: a real server kept sending to the loser's MAC),
// so the ACTIVE announces again, on the release or on the lost peer's first heartbeat.
class ClusterCoreHeal : public ::testing::Test {
 protected:
  ClusterCoreHeal() : core_(config(), t0_, {}) {
    core_.onQuorum(t0_, true);
    core_.onHeartbeat(t0_, backupBeat("lb2", 1000));
    core_.onResourcesStarted(t0_);
  }
  static CoreConfig config() {
    CoreConfig cfg;
    cfg.self = "lb1";
    cfg.priority = 200;
    cfg.peers = {{"lb2", 100}};
    cfg.dead_time = 1s;
    return cfg;
  }
  // lb2 is lost (the cut); returns when.
  Time loseThePeer() {
    Time t = t0_ + 2s;
    core_.onTick(t);
    return t;
  }
  Time t0_{};
  ClusterCore core_;
};

TEST_F(ClusterCoreHeal, AReleaseFromAPeerLastSeenAsBackupIsAnnouncedOver) {
  ASSERT_EQ(core_.role(), Role::kActive);
  Time t = loseThePeer();
  EXPECT_TRUE(has(core_.onRelease(t + 10ms, "lb2", 0), Action::Kind::kReannounce));
  EXPECT_EQ(core_.role(), Role::kActive);
}

TEST_F(ClusterCoreHeal, AReleaseFromAnEpochOlderThanThePeersHeartbeatsIsStale) {
  Time t = t0_ + 100ms;
  Heartbeat hb = activeBeat("lb2");
  hb.epoch = 5;
  hb.resources_held = true;
  core_.onHeartbeat(t, hb);
  Actions late = core_.onRelease(t + 10ms, "lb2", 4);
  EXPECT_FALSE(has(late, Action::Kind::kReannounce));
  bool logged = false;
  for (const auto& a : late) {
    logged = logged || (a.kind == Action::Kind::kLog &&
                        a.text.find("stale release ignored node=lb2 epoch=4") != std::string::npos);
  }
  EXPECT_TRUE(logged);
  bool still_held = false;
  for (const auto& n : core_.status(t + 10ms).nodes) {
    if (n.name == "lb2") still_held = n.role == "ACTIVE";
  }
  EXPECT_TRUE(still_held) << "the stale release changed nothing";
  Actions current = core_.onRelease(t + 20ms, "lb2", 5);
  bool released = false;
  for (const auto& a : current) {
    released = released || (a.kind == Action::Kind::kLog && a.text == "peer released node=lb2");
  }
  EXPECT_TRUE(released) << "one of its current epoch is taken";
}

TEST_F(ClusterCoreHeal, TheFirstHeartbeatOfALostPeerIsAnnouncedOver) {
  Time t = loseThePeer();
  EXPECT_TRUE(has(core_.onHeartbeat(t + 10ms, backupBeat("lb2", 1000)), Action::Kind::kReannounce));
  EXPECT_FALSE(
      has(core_.onHeartbeat(t + 210ms, backupBeat("lb2", 1000)), Action::Kind::kReannounce))
      << "once: the peer is in sight again";
}

TEST_F(ClusterCoreHeal, ARingVerdictAfterAMissedDeadlineIsLoggedAsTheSilence) {
  // The loop stalled past lb2's deadline (t0 + dead_time): no tick ran, and the first event after
  // the stall is corosync's membership change (token + consensus after the cut).
  Actions out = core_.onNodeLeft(t0_ + 2200ms, "lb2");
  std::vector<std::string> lost;
  for (const auto& a : out) {
    if (a.kind == Action::Kind::kLog && a.text.rfind("peer lost", 0) == 0) lost.push_back(a.text);
  }
  EXPECT_EQ(lost,
            std::vector<std::string>{
                "peer lost node=lb2 reason=\"no heartbeat for dead_time\" held_resources=no"});
}

TEST_F(ClusterCoreHeal, ARingVerdictBeforeTheDeadlineLosesNoPeer) {
  // As in the cluster lab: the verdict about an earlier cut, healed since, arrives 600 ms into
  // a new silence (more than two heartbeats, less than dead_time).
  Actions out = core_.onNodeLeft(t0_ + 600ms, "lb2");
  std::vector<std::string> logs;
  for (const auto& a : out) {
    if (a.kind == Action::Kind::kLog) logs.push_back(a.text);
  }
  EXPECT_EQ(logs, std::vector<std::string>{
                      "corosync dropped node=lb2 last_heartbeat_ms_ago=600; dead_time decides"});
  std::vector<std::string> lost;
  for (const auto& a : core_.onTick(t0_ + 1000ms)) {
    if (a.kind == Action::Kind::kLog && a.text.rfind("peer lost", 0) == 0) lost.push_back(a.text);
  }
  EXPECT_EQ(lost,
            std::vector<std::string>{
                "peer lost node=lb2 reason=\"no heartbeat for dead_time\" held_resources=no"});
}
TEST_F(ClusterCoreHeal, APeerNeverLostIsNoReasonToAnnounce) {
  EXPECT_FALSE(
      has(core_.onHeartbeat(t0_ + 200ms, backupBeat("lb2", 1000)), Action::Kind::kReannounce));
}

}  // namespace
}  // namespace tandem::election

namespace tandem::election {
namespace {

using namespace std::chrono_literals;

// The votequorum connection is lost (corosync stopped, or restarting under a live tandemd): its
// last answer stands for quorum_hold (8 s here, as by default), then the quorum is unknown.
// Starts the pair and takes votequorum away from lb1 once it is ACTIVE.
void loseVotequorumOnTheActive(SimCluster& c) {
  c.start("lb1");
  c.start("lb2");
  c.advance(5s);
  ASSERT_TRUE(exactlyOneActive(c, "lb1"));
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onQuorumLost(when); });
}

bool logged(const SimCluster& c, const std::string& line) {
  return std::find(c.log.begin(), c.log.end(), line) != c.log.end();
}

TEST(ClusterSim, AnActiveWhoseVotequorumStaysAwayReleasesWhenQuorumHoldRunsOut) {
  SimCluster c = pair();
  ASSERT_NO_FATAL_FAILURE(loseVotequorumOnTheActive(c));
  c.advance(8000ms - 1ms);
  EXPECT_TRUE(exactlyOneActive(c, "lb1")) << "the verdict is held";
  const CoreStatus held = c.node("lb1").core->status(c.now());
  EXPECT_EQ(held.quorate, std::optional<bool>(true));
  EXPECT_EQ(held.quorum_held_ms, std::optional<int64_t>(7999));
  c.advance(1ms);
  EXPECT_NE(c.role("lb1"), Role::kActive) << "the hold ran out: quorum unknown";
  EXPECT_TRUE(logged(c, "lb1: log quorum unknown node=lb1: votequorum lost 8000 ms ago"));
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 3s));
  EXPECT_EQ(c.role("lb1"), Role::kFault);
  const CoreStatus dropped = c.node("lb1").core->status(c.now());
  EXPECT_EQ(dropped.quorate, std::nullopt);
  EXPECT_EQ(dropped.quorum_held_ms, std::nullopt);
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

TEST(ClusterSim, UnderTheIgnorePolicyAnActiveStaysWhenQuorumHoldRunsOut) {
  SimCluster::Options opt;
  opt.ignore_quorum = true;
  SimCluster c = pair(opt);
  ASSERT_NO_FATAL_FAILURE(loseVotequorumOnTheActive(c));
  c.advance(20s);
  EXPECT_EQ(c.node("lb1").core->status(c.now()).quorate, std::nullopt);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
  EXPECT_EQ(c.node("lb1").starts, 1) << "no role change";
}

// A corosync restart: about 1.2 s to stop, 2.5 s to start and rejoin, then votequorum answers.
TEST(ClusterSim, ACorosyncRestartWithinQuorumHoldCausesNoRoleChange) {
  SimCluster c = pair();
  ASSERT_NO_FATAL_FAILURE(loseVotequorumOnTheActive(c));
  c.advance(3700ms);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onQuorum(when, true); });
  EXPECT_EQ(c.node("lb1").core->status(c.now()).quorum_held_ms, std::nullopt);
  c.advance(20s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
  EXPECT_EQ(c.node("lb1").starts, 1);
  EXPECT_EQ(c.node("lb1").stops, 0);
  EXPECT_EQ(c.node("lb2").starts, 0) << "the peer never took over";
  EXPECT_EQ(c.node("lb1").core->status(c.now()).quorate, std::optional<bool>(true));
}

// What a real corosync restart looks like (measured in the lab): votequorum is back after
// about 1.5 s saying "not quorate", and "quorate" once the node has rejoined, about 0.9 s later.
void votequorumBackNotQuorate(SimCluster& c) {
  ASSERT_NO_FATAL_FAILURE(loseVotequorumOnTheActive(c));
  c.advance(1500ms);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onQuorum(when, false); });
}

TEST(ClusterSim, ARestartedCorosyncSayingNotQuorateUntilItRejoinsChangesNothing) {
  SimCluster c = pair();
  ASSERT_NO_FATAL_FAILURE(votequorumBackNotQuorate(c));
  EXPECT_EQ(c.role("lb1"), Role::kActive) << "the held verdict stands";
  EXPECT_TRUE(c.node("lb1").core->status(c.now()).quorum_held_ms.has_value());
  c.advance(900ms);
  c.act("lb1", [](ClusterCore& core, Time when) { return core.onQuorum(when, true); });
  c.advance(20s);
  EXPECT_TRUE(exactlyOneActive(c, "lb1"));
  EXPECT_EQ(c.node("lb1").stops, 0);
  EXPECT_EQ(c.node("lb2").starts, 0) << "the peer never took over";
  EXPECT_EQ(c.node("lb1").core->status(c.now()).quorate, std::optional<bool>(true));
}

TEST(ClusterSim, ACorosyncBackButNeverQuorateLosesQuorumWhenTheHoldRunsOut) {
  SimCluster c = pair();
  ASSERT_NO_FATAL_FAILURE(votequorumBackNotQuorate(c));
  c.advance(6499ms);
  EXPECT_EQ(c.role("lb1"), Role::kActive) << "still within quorum_hold";
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 3s));
  EXPECT_EQ(c.node("lb1").core->status(c.now()).quorate, std::optional<bool>(false))
      << "votequorum's own answer, not unknown";
  EXPECT_EQ(c.node("lb1").core->status(c.now()).quorum_held_ms, std::nullopt);
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

TEST(ClusterSim, AQuorumHoldOfZeroDropsTheVerdictAtOnce) {
  SimCluster::Options opt;
  opt.quorum_hold = 0ms;
  SimCluster c = pair(opt);
  ASSERT_NO_FATAL_FAILURE(loseVotequorumOnTheActive(c));
  EXPECT_NE(c.role("lb1"), Role::kActive);
  EXPECT_EQ(c.node("lb1").core->status(c.now()).quorate, std::nullopt);
  ASSERT_TRUE(c.advanceUntil([&] { return exactlyOneActive(c, "lb2"); }, 3s));
  EXPECT_EQ(c.maxHoldersInOneGroup(), 1);
}

}  // namespace
}  // namespace tandem::election

namespace tandem::election {
namespace {

using namespace std::chrono_literals;

std::string peerRole(const ClusterCore& core, const std::string& peer, Time now) {
  for (const NodeView& n : core.status(now).nodes) {
    if (n.name == peer) return n.role;
  }
  return "";
}

// After a stall (a CPU-starved loop) the first callback to run may be any event at all, with
// the peer's frames still unread in the sockets. Only the peer's own deadline, which the shell
// runs after reading its input (ClusterNode), may declare it dead.
TEST(ClusterCoreExpiry, OnlyThePeersDeadlineDeclaresItDeadNotAnEventThatRunsFirst) {
  CoreConfig cfg;
  cfg.self = "lb2";
  cfg.priority = 100;
  cfg.peers["lb1"] = 200;
  cfg.heartbeat_interval = 200ms;
  cfg.dead_time = 1000ms;
  const Time t0{};
  ClusterCore core(cfg, t0, Startup{});
  (void)core.onQuorum(t0, true);
  Heartbeat hb = wire::testing::sampleHeartbeat();  // lb1, ACTIVE, holding, quorate
  hb.sender = "lb1";
  hb.incarnation = 1;
  hb.priority = 200;
  (void)core.onHeartbeat(t0 + 100ms, hb);
  ASSERT_EQ(peerRole(core, "lb1", t0 + 100ms), "ACTIVE");

  const Time late = t0 + 1500ms;  // past lb1's deadline
  Actions a = core.onLocalHealth(late, 900, true);
  EXPECT_EQ(peerRole(core, "lb1", late), "ACTIVE") << "a health result declared the peer dead";
  EXPECT_TRUE(std::none_of(
      a.begin(), a.end(), [](const Action& x) { return x.kind == Action::Kind::kStartResources; }));
  (void)core.onTick(late);
  EXPECT_EQ(peerRole(core, "lb1", late), "LOST");
}

}  // namespace
}  // namespace tandem::election
