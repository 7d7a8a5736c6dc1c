// Two and three whole directors in one process: each a Director on its own FakePlatform, all on
// one simulated dispatcher, joined by a FakeWorld that carries their UDP frames and CPG
// messages and can cut or partition them. Nothing here sleeps; an hour of timers runs in
// milliseconds.
#include "director/director.h"

#include <gtest/gtest.h>
#include <netinet/in.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/golden_file.h"
#include "director/cluster_fixture.h"
#include "director/fake_platform.h"
#include "format_config.h"
#include "format_explain.h"
#include "format_history.h"
#include "wire/frame.h"

namespace tandem::director {
namespace {

// --- start, failures, moves -------------------------------------------------------------------

TEST_F(Cluster, APairElectsTheHigherPriorityAndOnlyItHoldsTheVip) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(2s);
  EXPECT_EQ(role("b"), Role::kBackup);
  EXPECT_TRUE(holdsVip("a"));
  EXPECT_FALSE(holdsVip("b"));
  // The IPVS table is kept on both, whatever the role.
  EXPECT_EQ(platforms_["a"]->ipvsKernel().table().services.size(), 1u);
  EXPECT_EQ(platforms_["b"]->ipvsKernel().table().services.size(), 1u);
}

TEST_F(Cluster, ThreeDirectorsElectOneAndTheNextTakesOverWhenItDies) {
  build(kTrio);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(1s);
  kill("a");
  auto took = runUntil(3s, [&] { return role("b") == Role::kActive; });
  ASSERT_TRUE(took);
  EXPECT_LE(*took, 1300ms) << "dead_time is 1 s";
  run(2s);
  EXPECT_EQ(role("c"), Role::kBackup);
  EXPECT_TRUE(holdsVip("b"));
  EXPECT_FALSE(holdsVip("c"));
}

// b's view of a peer, by its heartbeats: "BACKUP", "LOST", "UNKNOWN"...
std::string seenAs(Director& d, const std::string& peer) {
  for (const auto& n : d.clusterNode()->status().nodes) {
    if (n.name == peer) return n.role;
  }
  return "absent";
}

TEST_F(Cluster, ANodeWhoseClockSteppedBackAcrossARestartIsHeardAtOnce) {
  build(kPair);
  platforms_["b"]->wall_offset_ms = 2 * 3600 * 1000;
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(1s);
  kill("b");
  ASSERT_TRUE(runUntil(3s, [&] { return seenAs(*directors_["a"], "b") == "LOST"; }));
  platforms_["b"]->wall_offset_ms = 3600 * 1000;  // an hour back
  start("b");
  auto heard = runUntil(3s, [&] { return seenAs(*directors_["a"], "b") == "BACKUP"; });
  ASSERT_TRUE(heard) << "a drops b's frames: "
                     << counters("a").of(wire::Rejection::kStaleIncarnation)
                     << " stale_incarnation";
  EXPECT_LE(*heard, 1s) << "within dead_time";
  EXPECT_EQ(counters("a").of(wire::Rejection::kStaleIncarnation), 0u);
  EXPECT_EQ(
      platforms_["b"]->log().count(LogLevel::kWarning, "the clock is behind the last run's start"),
      1u)
      << "the step back is logged";
  // A record that is not a number is named and replaced; the start goes on.
  kill("b");
  ASSERT_TRUE(platforms_["b"]->stateFiles().write("/var/lib/tandem/incarnation", "garbage\n"));
  start("b");
  EXPECT_EQ(
      platforms_["b"]->log().count(
          LogLevel::kWarning, "/var/lib/tandem/incarnation: \"garbage\" is not an incarnation"),
      1u);
  auto record = platforms_["b"]->stateFiles().read("/var/lib/tandem/incarnation");
  ASSERT_TRUE(record && *record);
  EXPECT_NE(**record, "garbage\n");
}

TEST_F(Cluster, TheBackupTakesOverWhenTheActivesLinkIsCutAndOneRemainsAfterTheHeal) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  world_.cut("a", true);
  auto took = runUntil(
      3s, [&] { return role("b") == Role::kActive; }, /*allow_two=*/true);
  ASSERT_TRUE(took);
  EXPECT_GE(*took, 800ms);
  EXPECT_LE(*took, 1300ms);
  world_.cut("a", false);
  // Both held the VIP while apart (no tiebreaker here); after the heal exactly one keeps it.
  ASSERT_TRUE(runUntil(
      2s, [&] { return active().size() == 1; }, /*allow_two=*/true));
  run(3s);
  std::string winner = active().at(0);
  std::string loser = winner == "a" ? "b" : "a";
  EXPECT_TRUE(holdsVip(winner));
  EXPECT_FALSE(holdsVip(loser));
}

TEST_F(Cluster, APartitionedTrioHealsToOneActive) {
  build(kTrio);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  world_.partition("a", "b", true);
  world_.partition("a", "c", true);
  ASSERT_TRUE(runUntil(
      3s, [&] { return role("b") == Role::kActive; }, true));
  EXPECT_EQ(role("c"), Role::kBackup) << "c still hears b, which took over";
  world_.partition("a", "b", false);
  world_.partition("a", "c", false);
  ASSERT_TRUE(runUntil(
      2s, [&] { return active().size() == 1; }, true));
  run(3s);
  int holders = 0;
  for (const char* n : {"a", "b", "c"}) holders += holdsVip(n) ? 1 : 0;
  EXPECT_EQ(holders, 1);
}

TEST_F(Cluster, APlannedMoveHandsOverWithoutTwoActive) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  auto moved = directors_["a"]->move({"b", std::nullopt});
  ASSERT_TRUE(moved) << moved.error().message;
  auto took = runUntil(2s, [&] { return role("b") == Role::kActive; });
  ASSERT_TRUE(took);
  EXPECT_LT(*took, 200ms) << "a move is a handover, not a timeout";
  run(2s);
  EXPECT_EQ(role("a"), Role::kBackup);
  EXPECT_TRUE(holdsVip("b"));
  EXPECT_FALSE(holdsVip("a"));
}

TEST_F(Cluster, AMoveToANodeInStandbyIsRefusedAndLeavesNothing) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  ASSERT_TRUE(directors_["b"]->standby({"b", true, std::nullopt}));
  run(1s);
  auto moved = directors_["a"]->move({"b", std::nullopt});
  ASSERT_FALSE(moved);
  EXPECT_EQ(moved.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(moved.error().message,
            "b cannot take the services now: it is in standby (`tandem node online` first); "
            "nothing was changed");
  EXPECT_EQ(directors_["a"]->status()["move_target"], "");
  ASSERT_TRUE(directors_["b"]->standby({"b", false, std::nullopt}));
  run(3s);
  EXPECT_EQ(role("a"), Role::kActive) << "a refused move pulled the services";
}

TEST_F(Cluster, MaintenanceKeepsTheVipThroughACleanStop) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  ASSERT_TRUE(directors_["b"]->maintenance(true));
  run(1s);
  EXPECT_EQ(directors_["a"]->status()["maintenance"], true);
  directors_["a"]->stop("SIGTERM");
  EXPECT_TRUE(platforms_["a"]->nodeDispatcher().stopped())
      << "it waited to hand over (for stop_timeout) instead of leaving at once";
  run(5s);
  EXPECT_TRUE(holdsVip("a")) << "a clean stop in maintenance released the VIP";
  EXPECT_NE(role("b"), Role::kActive) << "b took over in maintenance";
  EXPECT_FALSE(holdsVip("b"));
}

TEST_F(Cluster, StopHandsOverBeforeTheLoopEnds) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  ASSERT_TRUE(platforms_["a"]->nodeDispatcher().deliver(loop::Signal::kTerminate));
  EXPECT_FALSE(platforms_["a"]->nodeDispatcher().stopped()) << "it hands over first";
  auto took = runUntil(2s, [&] { return role("b") == Role::kActive; });
  ASSERT_TRUE(took);
  EXPECT_LT(*took, 800ms) << "a handover, well before dead_time";
  ASSERT_TRUE(runUntil(1s, [&] { return platforms_["a"]->nodeDispatcher().stopped(); }));
  EXPECT_FALSE(holdsVip("a"));
  EXPECT_TRUE(holdsVip("b"));
}

// The unit's LoadCredential=tandem.authkey.1: the key is in $CREDENTIALS_DIRECTORY only.
TEST_F(Cluster, KeysFromSystemdCredentialsSignTheFramesAndWithoutThemTandemdDoesNotStart) {
  conf_.key_credential = true;
  build(kPair);
  const std::string dir = "/run/credentials/tandemd.service";
  for (const auto& n : kPair) {
    auto& fs = platforms_[n.name]->fileSystem();
    for (int k : {1, 2, 3}) fs.remove("/etc/tandem/authkey." + std::to_string(k));
    fs.credentials_directory = dir;
    fs.write(dir + "/tandem.authkey.1", std::string(32, 'c'), 0400);
  }
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] {
    return role("a") == Role::kActive && role("b") == Role::kBackup;
  })) << "the pair did not form on the credential's key";
  EXPECT_GT(counters("b").accepted, 0u);
  EXPECT_EQ(counters("b").rejectedTotal(), 0u);

  // The same config started outside the unit (no $CREDENTIALS_DIRECTORY).
  kill("b");
  platforms_["b"]->fileSystem().credentials_directory.clear();
  DirectorOptions o;
  o.config_path = kPath;
  o.node_name = "b";
  Director outside(*platforms_["b"], o);
  auto started = outside.start();
  ASSERT_FALSE(started);
  EXPECT_NE(started.error().message.find("the systemd credential \"tandem.authkey.1\" is not "
                                         "there ($CREDENTIALS_DIRECTORY is not set)"),
            std::string::npos)
      << started.error().message;
}

// /etc/default/tandem: TANDEM_FAILBACK=auto on both directors, whose config file says manual.
TEST_F(Cluster, TheUnitsFailbackOverrideRulesOverTheFileThroughReloadsAndStatusSaysSo) {
  build(kPair);
  failback_override_["a"] = "auto";
  failback_override_["b"] = "auto";
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  const nlohmann::json f = directors_["a"]->status()["failback"];
  EXPECT_EQ(f["policy"], "auto");
  EXPECT_EQ(f["source"], "TANDEM_FAILBACK");
  EXPECT_EQ(f["config_file"]["policy"], "manual");

  reload("a");  // the same file: the override stays, and the reload changes nothing
  run(500ms);
  EXPECT_EQ(directors_["a"]->status()["failback"]["policy"], "auto");
  EXPECT_EQ(directors_["a"]->status()["config_generation"], 2);

  kill("a");
  ASSERT_TRUE(runUntil(3s, [&] { return role("b") == Role::kActive; }));
  start("a");
  // The holder's policy decides whether it gives the service back: b's override (auto) makes
  // it hand over to the preferred a, where the file (manual) would keep it on b.
  EXPECT_TRUE(runUntil(10s, [&] { return role("a") == Role::kActive; }))
      << "a did not fail back under the overriding auto";
}

TEST_F(Cluster, ABadFailbackOverrideStopsTheStartNamingTheVariable) {
  build(kPair);
  failback_override_["a"] = "sometimes";
  DirectorOptions o;
  o.config_path = kPath;
  o.node_name = "a";
  o.failback_override = failback_override_["a"];
  Director d(*platforms_["a"], o);
  auto started = d.start();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().message,
            "failback override \"sometimes\" (TANDEM_FAILBACK or --failback): not a failback "
            "policy; use auto, manual or delayed:DURATION (e.g. delayed:5m)");
}

// --- restarts of tandemd (systemd's Restart=on-failure) ----------------------------------------

TEST_F(Cluster, AnActiveKilledAndRestartedAdoptsItsVipsWithoutRemovingOrMovingThem) {
  conf_.vips = {"198.51.100.50/32", "198.51.100.51/32"};
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  kill("a");  // kill -9: the kernel keeps the VIPs, STATE_DIR keeps the role
  run(300ms);
  const size_t mark = world_.journal.size();
  start("a");
  for (Millis t{0}; t < 5s; t += 10ms) {
    ASSERT_TRUE(holdsVip("a", "198.51.100.50/32") && holdsVip("a", "198.51.100.51/32"))
        << "a VIP left the interface at +" << t.count() << " ms";
    ASSERT_NE(role("b"), Role::kActive) << "b took over at +" << t.count() << " ms";
    sim_.advance(10ms);
  }
  EXPECT_EQ(role("a"), Role::kActive);
  EXPECT_EQ(journalOf("a", mark), (std::vector<std::string>{"holder written", "announce"}))
      << "adopted in place (the holder rewritten with the same name), announced again";
  EXPECT_TRUE(journalOf("b", mark).empty()) << "b never touched a resource";
  // A resume is not a takeover: the restarted tandemd counts none.
  EXPECT_EQ(directors_["a"]->clusterNode()->takeovers(), 0u);
}

// After a reboot (STATE_DIR on disk) or an `ip addr flush` while tandemd was down, the role file
// says ACTIVE but the VIPs are gone. The node must not say ACTIVE before they are back.
TEST_F(Cluster, ARestartWhoseVipsWereFlushedMeanwhileIsActiveOnlyOnceItHoldsAndAnnouncedThem) {
  conf_.vips = {"198.51.100.50/32", "198.51.100.51/32"};
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  kill("a");
  platforms_["a"]->addresses().drop("198.51.100.50/32");
  platforms_["a"]->addresses().drop("198.51.100.51/32");
  run(300ms);
  const size_t mark = world_.journal.size();
  start("a");
  auto took = untilActiveHoldingVips("a");
  ASSERT_TRUE(took) << "a never became ACTIVE again";
  EXPECT_LT(*took, 200ms) << "one heartbeat interval";
  EXPECT_EQ(journalOf("a", mark),
            (std::vector<std::string>{"holder written", "add 198.51.100.50/32",
                                      "add 198.51.100.51/32", "announce"}));
  run(3s);
  EXPECT_EQ(active(), std::vector<std::string>{"a"});
  EXPECT_TRUE(journalOf("b", mark).empty()) << "b never touched a resource";
}

TEST_F(Cluster, ABackupKilledAndRestartedChangesNoRole) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  const size_t mark = world_.journal.size();
  kill("b");
  run(300ms);
  start("b");
  ASSERT_TRUE(runUntil(3s, [&] { return role("b") == Role::kBackup; }));
  run(3s);
  EXPECT_EQ(role("a"), Role::kActive);
  EXPECT_EQ(role("b"), Role::kBackup);
  EXPECT_TRUE(journalOf("a", mark).empty()) << "a touched a resource";
  EXPECT_TRUE(journalOf("b", mark).empty()) << "b touched a resource";
}

TEST_F(Cluster, StatusAnswersFromTheLastStateAndStartsNoKernelWork) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(500ms);
  const int dumps = platforms_["a"]->addresses().dumps;
  const size_t ipvs_dumps = platforms_["a"]->ipvsKernel().dumps();
  const nlohmann::json status = directors_["a"]->status();
  auto shown = directors_["a"]->ipvs();
  ASSERT_TRUE(shown) << shown.error().message;
  EXPECT_EQ(platforms_["a"]->addresses().dumps, dumps);
  EXPECT_EQ(platforms_["a"]->ipvsKernel().dumps(), ipvs_dumps);
  bool vip_present = false;
  for (const auto& r : status.at("resources")) {
    if (r.at("name").get<std::string>().rfind("vip ", 0) == 0) vip_present = r.at("present");
  }
  EXPECT_TRUE(vip_present);
  EXPECT_EQ((*shown)["services"].size(), 1u);
}

// --- the takeover order -------------------------------------------------------------------------

TEST_F(Cluster, TakingOverRunsStateIpvsVipsAnnouncementsAndReleasingRunsThemBackwards) {
  conf_.vips = {"198.51.100.50/32", "198.51.100.51/32"};
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  EXPECT_EQ(journalOf("a"), (std::vector<std::string>{"holder written", "add 198.51.100.50/32",
                                                      "add 198.51.100.51/32", "announce"}));
  std::vector<std::string> names;
  const nlohmann::json status = directors_["a"]->status();
  for (const auto& r : status.at("resources")) names.push_back(r.at("name"));
  ASSERT_EQ(names.size(), 6u);
  EXPECT_EQ(names[0], "state-file");
  EXPECT_EQ(names[1], "ipvs-table");
  EXPECT_EQ(names[2].rfind("vip ", 0), 0u) << names[2];
  EXPECT_EQ(names[4].rfind("announce", 0), 0u) << names[4];

  size_t mark = world_.journal.size();
  ASSERT_TRUE(directors_["a"]->move({"b", std::nullopt}));
  ASSERT_TRUE(runUntil(2s, [&] { return role("b") == Role::kActive; }));
  EXPECT_EQ(journalOf("a", mark),
            (std::vector<std::string>{"remove 198.51.100.51/32", "remove 198.51.100.50/32",
                                      "holder removed"}));
}

TEST_F(Cluster, WithSyncTheBackupRunsEverywhereAndTheMasterMovesFirstInAndLastOut) {
  conf_.sync = "enabled = true\ninterface = \"eth1\"\nsync_id = 4\n";
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  ASSERT_TRUE(runUntil(1s, [&] { return platforms_["b"]->syncKernel().daemonsNow().size() == 1; }));
  EXPECT_EQ(journalOf("b"), (std::vector<std::string>{"sync start backup"}));
  EXPECT_EQ(journalOf("a"),
            (std::vector<std::string>{"sync start backup", "holder written", "sync start master",
                                      "add 198.51.100.50/32", "announce"}));
  const auto running = platforms_["a"]->syncKernel().daemonsNow();
  ASSERT_EQ(running.size(), 2u);
  for (const auto& d : running) {
    EXPECT_EQ(d.interface, "eth1");
    EXPECT_EQ(d.sync_id, 4u);
  }
  const nlohmann::json sync = directors_["a"]->status().at("sync");
  EXPECT_EQ(sync.at("daemons").at(1).at("state"), "master");
  EXPECT_EQ(sync.at("daemons").at(1).at("running"), true);
  auto answer = directors_["b"]->sync();  // `tandem sync status` on the BACKUP
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_EQ(answer->at("enabled"), true);
  ASSERT_EQ(answer->at("nodes").size(), 2u);
  EXPECT_EQ(answer->at("nodes").at(1).at("name"), "a");
  EXPECT_EQ(answer->at("nodes").at(1).at("role"), "ACTIVE");
  // a's next heartbeats say how long its backup daemon has run.
  EXPECT_TRUE(runUntil(1s, [&] {
    auto now = directors_["b"]->sync();
    return now && now->at("nodes").at(1).at("sync_backup_ms").get<int64_t>() > 0;
  }));

  size_t mark = world_.journal.size();
  ASSERT_TRUE(directors_["a"]->move({"b", std::nullopt}));
  ASSERT_TRUE(runUntil(2s, [&] { return role("b") == Role::kActive; }));
  EXPECT_EQ(journalOf("a", mark), (std::vector<std::string>{"remove 198.51.100.50/32",
                                                            "sync stop master", "holder removed"}));
  EXPECT_EQ(journalOf("b", mark), (std::vector<std::string>{"holder written", "sync start master",
                                                            "add 198.51.100.50/32", "announce"}));
  EXPECT_EQ(platforms_["a"]->syncKernel().daemonsNow().size(), 1u) << "a keeps its backup";
}

TEST(TakeoverOrder, StagesSortStablyIntoTheOneOrder) {
  class Named final : public resources::Resource {
   public:
    explicit Named(std::string n) : n_(std::move(n)) {}
    std::string_view name() const override { return n_; }
    void start(resources::Done d) override { d({}); }
    void stop(resources::Done d) override { d({}); }
    void monitor(resources::Done d) override { d({}); }
    bool present() const override { return false; }

   private:
    std::string n_;
  };
  using resources::Stage;
  auto r = [](const char* n) { return std::make_shared<Named>(n); };
  auto order = resources::inTakeoverOrder({{Stage::kAnnounce, r("garp1")},
                                           {Stage::kVips, r("vip1")},
                                           {Stage::kIpvs, r("ipvs")},
                                           {Stage::kVips, r("vip2")},
                                           {Stage::kSync, r("sync")},
                                           {Stage::kAnnounce, r("garp2")},
                                           {Stage::kState, r("holder")}});
  std::vector<std::string> names;
  for (const auto& x : order) names.emplace_back(x->name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"holder", "sync", "ipvs", "vip1", "vip2", "garp1", "garp2"}));
}

// --- reloads
// --------------------------------------------------------------------------------------

TEST_F(Cluster, AReloadAddsRemovesAndChangesVipsAndNeverTouchesOneThatStays) {
  conf_.vips = {"198.51.100.50/32", "198.51.100.51/32", "198.51.100.52/32"};
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(1s);
  size_t mark = world_.journal.size();
  Conf next = conf_;
  next.vips = {"198.51.100.50/32", "198.51.100.52/28", "198.51.100.53/32"};
  for (const char* n : {"a", "b"}) {
    writeConf(n, next);
    reload(n);
  }
  run(1s);
  EXPECT_EQ(directors_["a"]->generation(), 2u);
  EXPECT_EQ(role("a"), Role::kActive) << "a reload is not a takeover";
  auto j = journalOf("a", mark);
  EXPECT_EQ(std::count(j.begin(), j.end(), "remove 198.51.100.50/32"), 0) << "the kept VIP";
  EXPECT_EQ(std::count(j.begin(), j.end(), "add 198.51.100.50/32"), 0) << "the kept VIP";
  EXPECT_EQ(std::vector<std::string>(j.begin(), j.begin() + std::min<size_t>(j.size(), 4)),
            (std::vector<std::string>{"remove 198.51.100.52/32", "remove 198.51.100.51/32",
                                      "add 198.51.100.52/28", "add 198.51.100.53/32"}));
  EXPECT_TRUE(holdsVip("a", "198.51.100.50/32"));
  EXPECT_TRUE(holdsVip("a", "198.51.100.52/28"));
  EXPECT_TRUE(holdsVip("a", "198.51.100.53/32"));
  EXPECT_FALSE(holdsVip("a", "198.51.100.51/32"));
  EXPECT_FALSE(holdsVip("b", "198.51.100.53/32")) << "the BACKUP holds none of them";
  const auto& log = platforms_["a"]->log();
  EXPECT_EQ(log.count(LogLevel::kNotice,
                      "reload vips: changed 198.51.100.52/32 on eth0 -> 198.51.100.52/28 on eth0; "
                      "added 198.51.100.53/32 on eth0; removed 198.51.100.51/32 on eth0"),
            1u);
}

uint16_t keyIdOf(const std::vector<uint8_t>& frame) {
  auto f = wire::decodeFrame(frame);
  return f ? f->key_id : 0;
}

TEST_F(Cluster, AKeyRotationInTheDocumentedStepsNeverSplitsThePair) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  // Step 2: key 2 beside key 1, still signing with 1.
  Conf c = conf_;
  c.keys = {1, 2};
  c.active_key = 1;
  for (const char* n : {"a", "b"}) {
    writeConf(n, c);
    reload(n);
    run(500ms);
  }
  size_t mark = world_.group_log.size();
  run(2s);
  ASSERT_GT(world_.group_log.size(), mark);
  EXPECT_EQ(keyIdOf(world_.group_log.back()), 1);
  // Step 3: sign with key 2, one director after the other.
  c.active_key = 2;
  for (const char* n : {"a", "b"}) {
    writeConf(n, c);
    reload(n);
    run(500ms);
    EXPECT_EQ(role("a"), Role::kActive);
    EXPECT_EQ(role("b"), Role::kBackup);
  }
  mark = world_.group_log.size();
  run(2s);
  ASSERT_GT(world_.group_log.size(), mark);
  for (size_t i = mark; i < world_.group_log.size(); ++i) {
    EXPECT_EQ(keyIdOf(world_.group_log[i]), 2) << "frame " << i;
  }
  std::vector<uint8_t> old_frame;
  for (const auto& f : world_.group_log) {
    if (keyIdOf(f) == 1) old_frame = f;
  }
  ASSERT_FALSE(old_frame.empty());
  // Step 4: key 1 goes.
  c.keys = {2};
  for (const char* n : {"a", "b"}) {
    writeConf(n, c);
    reload(n);
  }
  run(2s);
  EXPECT_EQ(directors_["a"]->generation(), 4u);
  EXPECT_EQ(role("a"), Role::kActive);
  EXPECT_EQ(role("b"), Role::kBackup);
  // A frame signed with the removed key is refused now.
  const uint64_t before = counters("b").of(wire::Rejection::kUnknownKey);
  directors_["b"]->clusterNode()->onMessage(1, 4242, old_frame);
  EXPECT_EQ(counters("b").of(wire::Rejection::kUnknownKey), before + 1);
}

TEST_F(Cluster, AReloadThatChangesPrioritiesAndFailbackMovesTheServices) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  Conf c = conf_;
  c.nodes = {{"a", 100, "198.51.100.1"}, {"b", 200, "198.51.100.2"}};
  c.failback = "auto";
  for (const char* n : {"a", "b"}) {
    writeConf(n, c);
    reload(n);
  }
  auto took = runUntil(3s, [&] { return role("b") == Role::kActive; });
  ASSERT_TRUE(took) << "b now has the higher priority and failback is auto";
  run(1s);
  EXPECT_TRUE(holdsVip("b"));
  EXPECT_FALSE(holdsVip("a"));
}

// Issue 12: quorum is unknown until votequorum answers. A director whose votequorum never
// answers does not take over from a silent peer on an assumption; the peer that hears its
// votequorum becomes ACTIVE, and status says the quorum is unknown, not false.
TEST_F(Cluster, ADirectorThatVotequorumNeverAnsweredStaysOutOfTheElection) {
  build(kPair);
  platforms_["a"]->quorum_silent = true;
  start("a");
  run(5s);
  EXPECT_NE(role("a"), Role::kActive);
  EXPECT_FALSE(holdsVip("a"));
  EXPECT_EQ(directors_["a"]->clusterNode()->status().quorate, std::nullopt);
  start("b");
  ASSERT_TRUE(runUntil(5s, [&] { return role("b") == Role::kActive; }))
      << "b, with quorum, is elected although a has the higher priority";
  run(2s);
  EXPECT_EQ(active(), std::vector<std::string>{"b"});
  EXPECT_FALSE(holdsVip("a"));
}

// corosync restarting under a live tandemd takes votequorum away for about 4 s: its last answer
// is held for cluster.quorum_hold (8 s by default), so nothing moves. One that stays away makes
// the quorum unknown, and the ACTIVE hands the service over to its peer.
TEST_F(Cluster, ACorosyncRestartUnderALiveDirectorMovesNothing) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  loseVotequorum("a");
  EXPECT_EQ(platforms_["a"]->log().count(LogLevel::kWarning,
                                         "its last verdict is held for 8s (cluster.quorum_hold)"),
            1u);
  run(3700ms);
  platforms_["a"]->quorum_listener->onQuorum(true);
  run(20s);
  EXPECT_EQ(active(), std::vector<std::string>{"a"});
  EXPECT_TRUE(holdsVip("a"));
  EXPECT_FALSE(holdsVip("b"));
}

TEST_F(Cluster, AVotequorumGoneLongerThanQuorumHoldHandsTheServiceOver) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  loseVotequorum("a");
  run(7900ms);
  EXPECT_EQ(active(), std::vector<std::string>{"a"}) << "within the hold";
  EXPECT_EQ(directors_["a"]->clusterNode()->status().quorate, std::optional<bool>(true));
  ASSERT_TRUE(runUntil(3s, [&] { return role("b") == Role::kActive; }));
  run(1s);
  EXPECT_EQ(active(), std::vector<std::string>{"b"});
  EXPECT_FALSE(holdsVip("a"));
  EXPECT_EQ(directors_["a"]->clusterNode()->status().quorate, std::nullopt);
}

// The fault matrix's starvation row: a BACKUP whose loop falls behind (its CPU held to 5 %) runs
// its dead_time deadline with the ACTIVE's frames still unread in its sockets. It must judge
// what arrived, not what it has read so far.
TEST_F(Cluster, ABackupWhoseLoopFallsBehindReadsWhatArrivedBeforeCallingThePeerDead) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  world_.stall("b", true);
  run(5s);  // five dead_times: b's deadline runs at each, with a's frames waiting
  EXPECT_EQ(role("b"), Role::kBackup) << "b took a's silence on trust";
  EXPECT_EQ(active(), std::vector<std::string>{"a"});
  world_.stall("b", false);
  run(2s);
  EXPECT_EQ(active(), std::vector<std::string>{"a"});
  EXPECT_FALSE(holdsVip("b"));
}

TEST_F(Cluster, AReloadOfTheHeartbeatIntervalChangesHowOftenFramesGo) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  auto udpFramesIn = [&](Millis d) {
    const uint64_t before = counters("b").accepted;
    run(d);
    return counters("b").accepted - before;
  };
  const uint64_t at200 = udpFramesIn(10s);
  Conf c = conf_;
  c.heartbeat_interval = "100ms";
  writeConf("a", c);
  reload("a");
  const uint64_t at100 = udpFramesIn(10s);
  // Frames reach b over UDP every interval and over CPG every half dead_time (500 ms).
  EXPECT_NEAR(static_cast<double>(at200), 70.0, 3.0);
  EXPECT_NEAR(static_cast<double>(at100), 120.0, 3.0);
}

// --- health checks ---------------------------------------------------------------------------

// Checks run on the backup too, so a takeover finds the weights already right: each director's
// own kernel table follows what its own checks see, within the failure window of the reference.
TEST_F(Cluster, HealthChecksOnEveryDirectorSetTheWeightsAndTheFallback) {
  conf_.real_servers = {"203.0.113.11:80", "203.0.113.12:80"};
  conf_.fallback = "203.0.113.99:80";
  conf_.check = "type = \"tcp\"\ninterval = \"1s\"\ntimeout = \"500ms\"\nrise = 2\nfall = 2\n";
  const Endpoint rs1 = *Endpoint::parse("203.0.113.11:80", false);
  const Endpoint rs2 = *Endpoint::parse("203.0.113.12:80", false);
  auto& servers = world_.checks().servers;
  servers[rs1] = fakes::Server::kAlive;
  servers[rs2] = fakes::Server::kAlive;
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  const resources::ipvs::ServiceKey web{Family::kInet, IPPROTO_TCP,
                                        *IpAddress::parse("198.51.100.50"), 80, 0};
  auto weight = [&](const std::string& node, const Endpoint& rs) -> int {
    auto d =
        platforms_[node]->ipvsKernel().dest(web, resources::ipvs::DestKey{rs.address, rs.port});
    return d ? d->weight : -1;  // -1: not in the table
  };
  const Endpoint sorry = *Endpoint::parse("203.0.113.99:80", false);
  for (const char* n : {"a", "b"}) {
    EXPECT_EQ(weight(n, rs1), 1) << n;
    EXPECT_EQ(weight(n, sorry), -1) << n;
  }

  // One real server dies: quiescent (weight 0) on both directors, within the failure window
  // (500 ms x 2 + 1 s) plus the interval until its first failed check.
  servers[rs1] = fakes::Server::kHung;
  auto took = runUntil(4s, [&] { return weight("a", rs1) == 0 && weight("b", rs1) == 0; });
  ASSERT_TRUE(took) << "rs1 never set to weight 0 on both directors";
  EXPECT_LE(*took, 3s);
  EXPECT_EQ(weight("a", rs2), 1);
  EXPECT_EQ(platforms_["b"]->log().count(LogLevel::kWarning,
                                         "real server down vs=web rs=203.0.113.11:80 check=tcp"),
            1u);

  // Both dead: the fallback is installed; one back: it is removed again.
  servers[rs2] = fakes::Server::kDead;
  ASSERT_TRUE(runUntil(4s, [&] { return weight("a", sorry) == 1 && weight("b", sorry) == 1; }));
  servers[rs1] = fakes::Server::kAlive;
  ASSERT_TRUE(runUntil(4s, [&] {
    return weight("a", sorry) == -1 && weight("b", sorry) == -1 && weight("a", rs1) == 1 &&
           weight("b", rs1) == 1;
  }));
  EXPECT_EQ(weight("b", rs2), 0);

  // `tandem status` carries each director's view.
  const nlohmann::json st = directors_["b"]->status();
  ASSERT_TRUE(st.contains("health")) << st.dump();
  EXPECT_EQ(st["health"]["checked"], 2);
  EXPECT_EQ(st["health"]["up"], 1);
}

// `tandem real drain`: a real server held at weight 0 on every director, whatever its checks
// say, through a reload, a restart of tandemd and a failover; `real enable` gives it back.
TEST_F(Cluster, ADrainHoldsTheWeightAtZeroClusterWideThroughReloadRestartAndFailover) {
  conf_.real_servers = {"203.0.113.11:80", "203.0.113.12:80"};
  conf_.check = "type = \"tcp\"\ninterval = \"1s\"\ntimeout = \"500ms\"\nrise = 2\nfall = 2\n";
  const Endpoint rs1 = *Endpoint::parse("203.0.113.11:80", false);
  const Endpoint rs2 = *Endpoint::parse("203.0.113.12:80", false);
  world_.checks().servers[rs1] = fakes::Server::kAlive;
  world_.checks().servers[rs2] = fakes::Server::kAlive;
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  const resources::ipvs::ServiceKey web{Family::kInet, IPPROTO_TCP,
                                        *IpAddress::parse("198.51.100.50"), 80, 0};
  auto weight = [&](const std::string& node, const Endpoint& rs) -> int {
    auto d =
        platforms_[node]->ipvsKernel().dest(web, resources::ipvs::DestKey{rs.address, rs.port});
    return d ? d->weight : -1;
  };
  auto both = [&](const Endpoint& rs, int w) {
    return weight("a", rs) == w && weight("b", rs) == w;
  };
  ASSERT_TRUE(runUntil(3s, [&] { return both(rs1, 1) && both(rs2, 1); }));

  // Asked on the BACKUP, by the service's address and the server's address alone.
  auto drained = directors_["b"]->drain({"198.51.100.50:80", "203.0.113.11", true});
  ASSERT_TRUE(drained) << drained.error().message;
  EXPECT_EQ((*drained)["service"], "tcp 198.51.100.50:80");
  EXPECT_EQ((*drained)["name"], "web");
  EXPECT_EQ((*drained)["server"], "203.0.113.11:80");
  EXPECT_EQ((*drained)["changed"], true);
  auto took = runUntil(2s, [&] { return both(rs1, 0); });
  ASSERT_TRUE(took) << "rs1 not at weight 0 on both directors";
  EXPECT_LE(*took, 1s);  // the next heartbeat carries it
  EXPECT_TRUE(both(rs2, 1));
  // Asking again changes nothing; an unknown server or service is refused, naming it.
  EXPECT_EQ((*directors_["a"]->drain({"web", "203.0.113.11:80", true}))["changed"], false);
  auto unknown = directors_["a"]->drain({"web", "203.0.113.77:80", true});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "203.0.113.77:80 is not a real server of web (`tandem ipvs show` lists them)");
  EXPECT_FALSE(directors_["a"]->drain({"tcp 198.51.100.99:80", "203.0.113.11", true}));

  // The checks keep finding rs1 alive: they cannot raise it. Two monitor intervals: each
  // director has dumped its table since the write.
  run(11s);
  EXPECT_TRUE(both(rs1, 0));
  const nlohmann::json view = *directors_["a"]->drains();
  ASSERT_EQ(view["drains"].size(), 1u) << view.dump();
  EXPECT_EQ(view["drains"][0]["configured"], true);
  ASSERT_EQ(view["nodes"].size(), 2u);
  EXPECT_EQ(view["nodes"][0]["name"], "a");
  // The fake kernel holds no connections: once a dump saw weight 0, the drain is done.
  EXPECT_EQ(view["nodes"][0]["progress"][0]["active_conns"], 0) << view.dump();
  EXPECT_EQ(view["nodes"][1]["name"], "b");
  EXPECT_EQ(view["nodes"][1]["progress"][0]["templates"], 0) << view.dump();
  const nlohmann::json shown = *directors_["a"]->ipvs();
  bool flagged = false;
  for (const auto& d : shown["services"][0]["destinations"]) {
    if (d["address"] == "203.0.113.11") flagged = d["drained"] == true;
  }
  EXPECT_TRUE(flagged) << shown.dump();

  // A reload keeps it; so does a restart of b's tandemd (STATE_DIR/drains).
  reload("a");
  run(2s);
  EXPECT_TRUE(both(rs1, 0));
  // Both down, b started alone: no peer to learn it from, and its first reconcile would set the
  // configured weight again without the file.
  kill("b");
  kill("a");
  start("b");
  run(2s);
  EXPECT_EQ(weight("b", rs1), 0) << "b's restarted tandemd lost the drain";

  // b takes over, a gone, with rs1 still drained.
  ASSERT_TRUE(runUntil(5s, [&] { return role("b") == Role::kActive; }));
  EXPECT_EQ(weight("b", rs1), 0);
  EXPECT_EQ(weight("b", rs2), 1);

  // Enabled again on the new ACTIVE: back to its configured weight.
  auto enabled = directors_["b"]->drain({"web", "203.0.113.11:80", false});
  ASSERT_TRUE(enabled) << enabled.error().message;
  EXPECT_EQ((*enabled)["changed"], true);
  ASSERT_TRUE(runUntil(2s, [&] { return weight("b", rs1) == 1; }));
  EXPECT_EQ((*directors_["b"]->drains())["drains"].size(), 0u);
}

// The Health column follows the checks: an ACTIVE that loses its way to every real server hands
// over to the backup that still sees them, and the pair never has two ACTIVE on the way.
TEST_F(Cluster, AnActiveThatSeesNoRealServerHandsOverToOneThatSeesThem) {
  conf_.real_servers = {"203.0.113.11:80", "203.0.113.12:80"};
  conf_.check = "type = \"tcp\"\ninterval = \"1s\"\ntimeout = \"500ms\"\nrise = 2\nfall = 2\n";
  for (const char* rs : {"203.0.113.11:80", "203.0.113.12:80"}) {
    world_.checks().servers[*Endpoint::parse(rs, false)] = fakes::Server::kAlive;
  }
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(3s);
  EXPECT_EQ(role("a"), Role::kActive) << "both see all: the holder keeps them";
  world_.checks().blind.insert("a");
  auto took = runUntil(6s, [&] { return role("b") == Role::kActive; });
  ASSERT_TRUE(took) << "b never took over from an ACTIVE that sees no real server";
  EXPECT_NE(role("a"), Role::kActive);
  EXPECT_EQ(platforms_["a"]->log().count(LogLevel::kNotice,
                                         "to=RELEASING event=not-elected reason=\"the holder sees "
                                         "no real server up; this node sees some (winner b)\""),
            1u);
  // a sees them again: b keeps them (manual failback), a is a healthy backup.
  world_.checks().blind.erase("a");
  run(5s);
  EXPECT_EQ(role("b"), Role::kActive);
  EXPECT_EQ(role("a"), Role::kBackup);
}

// Each director checks the real servers itself, out of phase: when the only real server dies,
// one director sees it up to a check period (interval + timeout) before the other, and the same
// when it comes back. A failure that both see is no reason to move the service, either way.
TEST_F(Cluster, ARealServerFailureBothDirectorsSeeNeverMovesTheService) {
  const Endpoint rs = *Endpoint::parse("203.0.113.11:80", false);
  conf_.real_servers = {"203.0.113.11:80"};
  conf_.check = "type = \"tcp\"\ninterval = \"2s\"\ntimeout = \"500ms\"\nrise = 2\nfall = 2\n";
  world_.checks().servers[rs] = fakes::Server::kAlive;
  build(kPair);
  // b starts most of a check interval after a, so their probes are far out of phase.
  start("a");
  run(900ms);
  start("b");
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(3s);
  auto holdA = [&](Millis d) {
    for (Millis t{0}; t < d; t += 10ms) {
      sim_.advance(10ms);
      ASSERT_EQ(role("a"), Role::kActive) << "a lost the resources at +" << t.count() << " ms";
    }
  };
  // Kill and revive at several points of the check period, so that a sees the change first in
  // some rounds and b in others.
  for (Millis at : {0ms, 500ms, 1000ms, 1500ms}) {
    SCOPED_TRACE("offset " + std::to_string(at.count()) + " ms");
    holdA(at);
    world_.checks().servers[rs] = fakes::Server::kDead;
    holdA(10s);
    world_.checks().servers[rs] = fakes::Server::kAlive;
    holdA(10s);
  }
  for (const char* d : {"a", "b"}) {
    EXPECT_EQ(platforms_[d]->log().count(LogLevel::kInfo, "real servers up 0 of 1 health=1"), 4u)
        << d << " saw every failure";
    EXPECT_EQ(platforms_[d]->log().count(LogLevel::kNotice, "to=TAKING_OVER"),
              d == std::string("a") ? 1u : 0u)
        << d;
    EXPECT_EQ(platforms_[d]->log().count(LogLevel::kNotice, "to=RELEASING"), 0u) << d;
  }
}

TEST_F(Cluster, AReloadOfVirtualServersLogLevelAndControlGroupTakesEffect) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  Conf c = conf_;
  c.real_servers = {"203.0.113.11:80", "203.0.113.12:80"};
  c.log_level = "debug";
  c.control_group = "tandem-admins";
  writeConf("b", c);
  reload("b");
  run(1s);
  auto& kernel = platforms_["b"]->ipvsKernel();
  ASSERT_EQ(kernel.table().services.size(), 1u);
  EXPECT_EQ(kernel.table().services[0].destinations.size(), 2u);
  EXPECT_EQ(platforms_["b"]->log().level(), LogLevel::kDebug);
  EXPECT_EQ(platforms_["b"]->admin_group, "tandem-admins");
  EXPECT_EQ(
      platforms_["b"]->log().count(LogLevel::kNotice, "changed=virtual_servers,control,daemon"),
      1u);
}

TEST_F(Cluster, AReloadThatAddsAFenceUsesItForTheNextTakeover) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  Conf c = conf_;
  c.fence = "/usr/local/sbin/fence-peer";
  writeConf("b", c);
  reload("b");
  world_.cut("a", true);
  run(3s);
  // The fake runner refuses to start children: the fence fails, and b does not take over from a
  // peer it could not fence.
  EXPECT_NE(role("b"), Role::kActive);
  EXPECT_EQ(platforms_["b"]->log().count(LogLevel::kWarning, "fencing peer=a"), 1u);
}

TEST_F(Cluster, AReloadThatAddsATiebreakerKeepsACutOffActiveFromHoldingOn) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  Conf c = conf_;
  c.tiebreaker = "198.51.100.254";
  for (const char* n : {"a", "b"}) {
    writeConf(n, c);
    reload(n);
  }
  run(1s);
  ASSERT_EQ(role("a"), Role::kActive) << "the target answers: nothing moves";
  world_.cut("a", true);
  ASSERT_TRUE(runUntil(
      3s, [&] { return role("b") == Role::kActive; }, /*allow_two=*/true));
  run(2s);
  // Without the tiebreaker both would hold the VIP while apart (see the link-cut test above).
  EXPECT_NE(role("a"), Role::kActive);
  EXPECT_FALSE(holdsVip("a"));
  EXPECT_TRUE(holdsVip("b"));
}

TEST_F(Cluster, AReloadThatChangesTheGroupIsRefusedWithTheKeyNamedAndChangesNothing) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  size_t mark = world_.journal.size();
  Conf c = conf_;
  c.group = "other";
  c.vips = {"198.51.100.50/32", "198.51.100.60/32"};  // would be added if anything applied
  writeConf("a", c);
  reload("a");
  run(2s);
  EXPECT_EQ(directors_["a"]->generation(), 1u);
  EXPECT_EQ(directors_["a"]->config().cluster.group, "tandem");
  EXPECT_EQ(role("a"), Role::kActive);
  EXPECT_TRUE(journalOf("a", mark).empty());
  EXPECT_EQ(
      platforms_["a"]->log().count(
          LogLevel::kError,
          "cluster.group cannot change while tandemd runs: running \"tandem\", new \"other\""),
      1u);
  EXPECT_EQ(platforms_["a"]->notifications().last().at("STATUS").rfind("Reload refused", 0), 0u);
  EXPECT_EQ(platforms_["a"]->groups_joined, (std::vector<std::string>{"tandem"}));
}

TEST_F(Cluster, AReloadWithAMissingKeyFileIsRefusedBeforeAnythingChanges) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  platforms_["a"]->fileSystem().remove("/etc/tandem/authkey.3");
  Conf c = conf_;
  c.keys = {1, 3};
  c.active_key = 3;
  c.vips = {"198.51.100.50/32", "198.51.100.60/32"};
  writeConf("a", c);
  reload("a");
  run(2s);
  EXPECT_EQ(directors_["a"]->generation(), 1u);
  EXPECT_FALSE(holdsVip("a", "198.51.100.60/32"));
  EXPECT_EQ(role("b"), Role::kBackup) << "a still signs with key 1, which b trusts";
}

// `tandem config diff|reload|show` against a whole director (issue 13): what it prints, as text
// and as JSON, in test/cli/golden/config/NAME.txt (TANDEM_UPDATE_GOLDEN=1 rewrites them).
std::string rendered(cli::CommandOutput (*render)(const Result<nlohmann::json>&, bool),
                     const Result<nlohmann::json>& answer) {
  std::string out;
  for (bool json : {false, true}) {
    // As the admin channel sends it: {"ok": true} and the handler's fields.
    Result<nlohmann::json> wire = answer;
    if (answer) wire = ipc::okBody(*answer);
    cli::CommandOutput o = render(wire, json);
    out += std::string(json ? "=== --json" : "=== text") +
           "\nexit: " + std::to_string(o.exit_code) + "\n--- stdout\n" + o.out + "--- stderr\n" +
           o.err;
  }
  return out;
}

void expectConfigGolden(const std::string& name, const std::string& got) {
  cli::testing::expectGoldenText(got, std::string(GOLDEN_DIR) + "/config/" + name + ".txt");
}

TEST_F(Cluster, ConfigDiffShowsWhatAReloadWouldChangeAndChangesNothing) {
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  Conf next = conf_;
  next.vips.push_back("198.51.100.51/32");
  next.keys = {1, 2};
  next.real_servers.push_back("203.0.113.12:80");
  next.check = "type = \"tcp\"\ninterval = \"2s\"\n";
  next.failback = "auto";
  writeConf("a", next);
  auto diff = directors_["a"]->configDiff();
  ASSERT_TRUE(diff) << diff.error().message;
  expectConfigGolden("diff-changes", rendered(cli::renderConfigDiff, diff));
  run(1s);
  EXPECT_FALSE(holdsVip("a", "198.51.100.51/32")) << "a diff applied something";
  EXPECT_EQ(directors_["a"]->generation(), 1u);

  auto reloaded = directors_["a"]->reload();
  ASSERT_TRUE(reloaded) << reloaded.error().message;
  expectConfigGolden("reload-applied", rendered(cli::renderReload, reloaded));
  EXPECT_EQ((*reloaded)["changes"], (*diff)["changes"]) << "the reload applied the diff, no more";
  run(1s);
  EXPECT_TRUE(holdsVip("a", "198.51.100.51/32"));
  expectConfigGolden("diff-nothing",
                     rendered(cli::renderConfigDiff, directors_["a"]->configDiff()));
}

TEST_F(Cluster, ConfigDiffOfAKeyThatCannotChangeLiveSaysTheReloadWouldBeRefused) {
  build(kPair);
  startAll();
  Conf next = conf_;
  next.group = "other";
  writeConf("a", next);
  auto diff = directors_["a"]->configDiff();
  ASSERT_TRUE(diff) << diff.error().message;
  expectConfigGolden("diff-refused", rendered(cli::renderConfigDiff, diff));
  expectConfigGolden("reload-refused", rendered(cli::renderReload, directors_["a"]->reload()));
  EXPECT_EQ(directors_["a"]->generation(), 1u);
}

TEST_F(Cluster, ConfigDiffOfAFileThatDoesNotLoadNamesTheLine) {
  build(kPair);
  startAll();
  platforms_["a"]->fileSystem().write(kPath, conf_.text() + "[cluster]\nname = 7\n");
  expectConfigGolden("diff-invalid",
                     rendered(cli::renderConfigDiff, directors_["a"]->configDiff()));
}

TEST_F(Cluster, ConfigShowIsTheRunningConfigAndSaysWhenTheFileChanged) {
  build(kPair);
  startAll();
  auto shown = directors_["a"]->configShow();
  ASSERT_TRUE(shown);
  EXPECT_EQ((*shown)["text"], conf_.text());
  EXPECT_EQ((*shown)["file_changed"], false);
  Conf next = conf_;
  next.failback = "auto";
  writeConf("a", next);
  expectConfigGolden("show-file-changed",
                     rendered(cli::renderConfigShow, directors_["a"]->configShow()));
}

// `tandem history` (issue 13): role changes with their reason, the takeover with its duration
// and an admin action, kept across a restart of tandemd (test/cli/golden/history).
TEST_F(Cluster, HistoryTellsTheTakeoverAndSurvivesARestartOfTandemd) {
  setenv("TZ", "UTC", 1);
  tzset();
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  kill("a");
  ASSERT_TRUE(runUntil(3s, [&] { return role("b") == Role::kActive; }));
  // What the admin channel reports after it carried out a request (AdminService::answer).
  ASSERT_TRUE(directors_["b"]->clear());
  directors_["b"]->audited("clear", "uid=0 pid=4242", "{}", "ok");
  run(2s);  // written within a second
  kill("b");
  start("b");
  ASSERT_TRUE(runUntil(3s, [&] { return role("b") == Role::kActive; }));
  auto h = directors_["b"]->history(0);
  ASSERT_TRUE(h);
  std::vector<std::string> kinds;
  for (const auto& e : (*h)["entries"]) kinds.push_back(e["kind"]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"start", "role", "role", "takeover", "admin", "start",
                                             "role"}))
      << "the second run's entries follow the first's, read back from STATE_DIR/history";
  const auto& takeover = (*h)["entries"][3];
  EXPECT_EQ(takeover["duration_ms"], 0) << "the fake resources answer at once";
  cli::testing::expectGoldenText(rendered(cli::renderHistory, h),
                                 std::string(GOLDEN_DIR) + "/history/restart.txt");
  // --since: only what came at or after it.
  const uint64_t last = (*h)["entries"].back()["at_ms"];
  EXPECT_EQ((*directors_["b"]->history(last))["entries"].size(), 1u);
}

TEST(History, KeepsTheNewestUpToItsCapacityAndSkipsLinesThatAreNoEntries) {
  History h(3);
  for (uint64_t i = 1; i <= 5; ++i) h.add({i, "role", "r" + std::to_string(i), "", std::nullopt});
  ASSERT_EQ(h.entries().size(), 3u);
  EXPECT_EQ(h.entries().front().at_ms, 3u);
  size_t skipped = 0;
  History back = History::parse(h.serialize() + "{\"at_ms\": \"soon\"}\nnot json\n", 2, &skipped);
  EXPECT_EQ(skipped, 2u);
  ASSERT_EQ(back.entries().size(), 2u);
  EXPECT_EQ(back.entries().front(), h.entries()[1]);
  EXPECT_EQ(h.since(5).size(), 1u);
}

TEST(History, AReasonThatIsNotUtf8IsWrittenNotThrown) {
  History h;
  // An exec check's output cut at a byte count, mid-character, or in Latin-1.
  h.add({1, "real-server", "web 203.0.113.11:80 down", "exec: \xc3", std::nullopt});
  h.add({2, "real-server", "web 203.0.113.11:80 up", "exec: caf\xe9", std::nullopt});
  std::string text;
  ASSERT_NO_THROW(text = h.serialize());
  size_t skipped = 0;
  EXPECT_EQ(History::parse(text, 10, &skipped).entries().size(), 2u);
  EXPECT_EQ(skipped, 0u);
}

// `tandem explain` (issue 13) on three directors: the answer, then what-ifs as the state moves.
TEST_F(Cluster, ExplainSaysWhyTheActiveIsActiveAndWhoTakesOverIfItFails) {
  build(kTrio);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(1s);
  auto healthy = directors_["c"]->explain();
  ASSERT_TRUE(healthy) << healthy.error().message;
  EXPECT_EQ((*healthy)["successor"], "b");
  std::string out = rendered(cli::renderExplain, healthy);
  // b in standby: c would take over instead.
  ASSERT_TRUE(directors_["b"]->standby({"b", true, std::nullopt}));
  run(1s);
  auto standby = directors_["c"]->explain();
  EXPECT_EQ((*standby)["successor"], "c");
  out += rendered(cli::renderExplain, standby);
  // Maintenance: nobody would.
  ASSERT_TRUE(directors_["a"]->maintenance(true));
  run(1s);
  auto frozen = directors_["c"]->explain();
  EXPECT_EQ((*frozen)["successor"], nullptr);
  EXPECT_EQ((*frozen)["maintenance"], true);
  out += rendered(cli::renderExplain, frozen);
  cli::testing::expectGoldenText(out, std::string(GOLDEN_DIR) + "/explain/trio.txt");
}

// --- metrics (issue 15) -------------------------------------------------------------------------

// The value of one sample line ("name{labels}") in a scrape; nullopt when it is not there.
std::optional<double> sampleOf(const std::string& scrape, const std::string& series) {
  const std::string line = "\n" + series + " ";
  size_t at = scrape.find(line);
  if (at == std::string::npos) return std::nullopt;
  return std::stod(scrape.substr(at + line.size()));
}

TEST_F(Cluster, TheMetricsFollowAFailoverAndARealServerFromWhatTheDirectorsHold) {
  conf_.metrics = "enabled = true\n";
  conf_.real_servers = {"203.0.113.11:80", "203.0.113.12:80"};
  conf_.check = "type = \"tcp\"\ninterval = \"1s\"\ntimeout = \"500ms\"\nrise = 2\nfall = 2\n";
  const Endpoint rs1 = *Endpoint::parse("203.0.113.11:80", false);
  auto& servers = world_.checks().servers;
  servers[rs1] = fakes::Server::kAlive;
  servers[*Endpoint::parse("203.0.113.12:80", false)] = fakes::Server::kAlive;
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(3s);
  EXPECT_EQ(platforms_["a"]->metrics_listen, Endpoint::parse("127.0.0.1:9474", false));
  // A scrape asks the kernel nothing: the IPVS series come from the last dump.
  const size_t ipvs_dumps = platforms_["a"]->ipvsKernel().dumps();
  const int address_dumps = platforms_["a"]->addresses().dumps;
  const std::string a = platforms_["a"]->scrape().value_or("");
  const std::string b = platforms_["b"]->scrape().value_or("");
  EXPECT_EQ(platforms_["a"]->ipvsKernel().dumps(), ipvs_dumps);
  EXPECT_EQ(platforms_["a"]->addresses().dumps, address_dumps);

  EXPECT_EQ(sampleOf(a, "tandem_role{role=\"ACTIVE\"}"), 1) << a;
  EXPECT_EQ(sampleOf(a, "tandem_role{role=\"BACKUP\"}"), 0);
  EXPECT_EQ(sampleOf(b, "tandem_role{role=\"BACKUP\"}"), 1) << b;
  EXPECT_EQ(sampleOf(b, "tandem_node_role{node=\"a\",role=\"ACTIVE\"}"), 1);
  EXPECT_EQ(sampleOf(a, "tandem_info{node=\"a\",cluster=\"t\",version=\"\"}"), 1);
  // A cold start that is elected took the services over: one takeover, as the history says.
  auto takeoversIn = [&](const std::string& n) {
    return static_cast<double>(std::count_if(
        directors_[n]->historyLog().entries().begin(), directors_[n]->historyLog().entries().end(),
        [](const HistoryEntry& e) { return e.kind == "takeover"; }));
  };
  EXPECT_EQ(sampleOf(a, "tandem_takeovers_total"), 1);
  EXPECT_EQ(takeoversIn("a"), 1);
  EXPECT_EQ(sampleOf(b, "tandem_takeovers_total"), 0);
  EXPECT_EQ(sampleOf(a, "tandem_vip_held{vip=\"198.51.100.50/32\"}"), 1);
  EXPECT_EQ(sampleOf(b, "tandem_vip_held{vip=\"198.51.100.50/32\"}"), 0);
  EXPECT_GT(sampleOf(a, "tandem_announcements_total").value_or(0), 0);
  EXPECT_EQ(sampleOf(a, "tandem_quorate"), 1);
  EXPECT_LT(sampleOf(b, "tandem_peer_last_heartbeat_age_seconds{node=\"a\"}").value_or(9), 0.5);
  EXPECT_GT(sampleOf(b, "tandem_frames_accepted_total").value_or(0), 10);
  EXPECT_EQ(sampleOf(b, "tandem_frames_rejected_total{reason=\"bad_signature\"}"), 0) << b;
  const std::string rs1_series = "{vs=\"web\",rs=\"203.0.113.11:80\"}";
  for (const std::string* s : {&a, &b}) {
    EXPECT_EQ(sampleOf(*s, "tandem_real_server_up" + rs1_series), 1);
    EXPECT_EQ(sampleOf(*s, "tandem_ipvs_real_server_weight" + rs1_series), 1);
    EXPECT_EQ(sampleOf(*s, "tandem_ipvs_services"), 1);
    EXPECT_EQ(sampleOf(*s, "tandem_virtual_server_healthy_real_servers{vs=\"web\"}"), 2);
    EXPECT_GT(sampleOf(*s, "tandem_checks_total{type=\"tcp\"}").value_or(0), 2);
    EXPECT_EQ(sampleOf(*s, "tandem_checks_total{type=\"http\"}"), 0);
    EXPECT_EQ(sampleOf(*s, "process_open_fds"), 12);
  }

  // a dies: b's role flips and its takeover counter rises by one.
  kill("a");
  ASSERT_TRUE(runUntil(3s, [&] { return role("b") == Role::kActive; }));
  std::string after = platforms_["b"]->scrape().value_or("");
  EXPECT_EQ(sampleOf(after, "tandem_role{role=\"ACTIVE\"}"), 1);
  EXPECT_EQ(sampleOf(after, "tandem_takeovers_total"), 1);
  EXPECT_EQ(sampleOf(after, "tandem_vip_held{vip=\"198.51.100.50/32\"}"), 1);
  EXPECT_EQ(
      sampleOf(after, "tandem_role_changes_total{event=\"elected-needs-fence\"}").value_or(0) +
          sampleOf(after, "tandem_role_changes_total{event=\"elected\"}").value_or(0),
      1)
      << after;
  EXPECT_TRUE(sampleOf(after, "tandem_takeover_last_duration_seconds"));

  // rs1 stops: the health series and the weight follow on b.
  servers[rs1] = fakes::Server::kHung;
  ASSERT_TRUE(runUntil(5s, [&] {
    const std::string now = platforms_["b"]->scrape().value_or("");
    return sampleOf(now, "tandem_real_server_up" + rs1_series) == 0 &&
           sampleOf(now, "tandem_ipvs_real_server_weight" + rs1_series) == 0;
  }));
  after = platforms_["b"]->scrape().value_or("");
  EXPECT_EQ(sampleOf(after, "tandem_virtual_server_healthy_real_servers{vs=\"web\"}"), 1);
  EXPECT_GT(sampleOf(after, "tandem_check_failures_total{type=\"tcp\"}").value_or(0), 1);
}

// Route health injection (issue 17): the route's series on each director follow what its
// route subsystem holds: the ACTIVE's route, a repair, a withdrawal when the service fails.
TEST_F(Cluster, TheRouteSeriesFollowTheActiveARepairAndAWithdrawal) {
  conf_.metrics = "enabled = true\n";
  conf_.route = "table = 100\n";
  conf_.vs_route = "min_healthy = 1\n";
  conf_.check = "type = \"tcp\"\ninterval = \"1s\"\ntimeout = \"500ms\"\nrise = 2\nfall = 2\n";
  const Endpoint rs1 = *Endpoint::parse("203.0.113.11:80", false);
  auto& servers = world_.checks().servers;
  servers[rs1] = fakes::Server::kAlive;
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(3s);
  const std::string route = "{vs=\"web\",route=\"198.51.100.50/32\"}";
  const std::string a = platforms_["a"]->scrape().value_or("");
  const std::string b = platforms_["b"]->scrape().value_or("");
  EXPECT_TRUE(platforms_["a"]->routes().has("198.51.100.50/32"));
  EXPECT_EQ(sampleOf(a, "tandem_route_held" + route), 1) << a;
  EXPECT_EQ(sampleOf(b, "tandem_route_held" + route), 0) << b;
  for (const std::string* s : {&a, &b}) {
    EXPECT_EQ(sampleOf(*s, "tandem_route_error" + route), 0);
    EXPECT_EQ(sampleOf(*s, "tandem_route_withdrawals_total" + route), 0);
    EXPECT_EQ(sampleOf(*s, "tandem_route_absorbed_flaps_total" + route), 0);
    EXPECT_EQ(sampleOf(*s, "tandem_route_repairs_total" + route), 0);
  }

  // Deleted behind tandem's back: the reconcile puts it back, and counts it.
  platforms_["a"]->routes().drop("198.51.100.50/32");
  run(6s);
  EXPECT_TRUE(platforms_["a"]->routes().has("198.51.100.50/32"));
  std::string now = platforms_["a"]->scrape().value_or("");
  EXPECT_EQ(sampleOf(now, "tandem_route_repairs_total" + route), 1) << now;
  EXPECT_EQ(sampleOf(now, "tandem_route_held" + route), 1);

  // The only real server stops: the route is withdrawn, once.
  servers[rs1] = fakes::Server::kHung;
  ASSERT_TRUE(runUntil(5s, [&] {
    return sampleOf(platforms_["a"]->scrape().value_or(""), "tandem_route_held" + route) == 0;
  }));
  now = platforms_["a"]->scrape().value_or("");
  EXPECT_FALSE(platforms_["a"]->routes().has("198.51.100.50/32"));
  EXPECT_EQ(sampleOf(now, "tandem_route_withdrawals_total" + route), 1) << now;
  EXPECT_EQ(sampleOf(now, "tandem_route_repairs_total" + route), 1);
}

TEST_F(Cluster, AScrapeWithoutARoutedServiceHasNoRouteSeries) {
  conf_.metrics = "enabled = true\n";
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  const std::string a = platforms_["a"]->scrape().value_or("");
  EXPECT_NE(a.find("tandem_vip_held"), std::string::npos);
  EXPECT_EQ(a.find("tandem_route_"), std::string::npos) << a;
}

TEST_F(Cluster, AMetricsAddressThatCannotBeHadStopsTheStartOrTheReloadAndKeepsTheOld) {
  conf_.metrics = "enabled = true\n";
  build(kPair);
  platforms_["a"]->metrics_refuse = true;
  DirectorOptions o;
  o.config_path = kPath;
  o.node_name = "a";
  directors_["a"] = std::make_unique<Director>(*platforms_["a"], o);
  auto started = directors_["a"]->start();
  ASSERT_FALSE(started);
  EXPECT_NE(started.error().message.find("metrics: cannot listen on 127.0.0.1:9474"),
            std::string::npos)
      << started.error().message;
  directors_.erase("a");

  start("b");
  ASSERT_TRUE(platforms_["b"]->scrape());
  // A move to an address that cannot be had is refused; the old endpoint serves on.
  Conf moved = conf_;
  moved.metrics = "enabled = true\nlisten = \"[::1]:9100\"\n";
  writeConf("b", moved);
  platforms_["b"]->metrics_refuse = true;
  reload("b");
  EXPECT_EQ(directors_["b"]->generation(), 1u);
  EXPECT_EQ(platforms_["b"]->metrics_listen, Endpoint::parse("127.0.0.1:9474", false));
  EXPECT_TRUE(platforms_["b"]->scrape());
  EXPECT_EQ(platforms_["b"]->log().count(LogLevel::kError, "config reload refused"), 1u);
  // Once it can be had, the reload moves it; turning it off closes it.
  platforms_["b"]->metrics_refuse = false;
  reload("b");
  EXPECT_EQ(directors_["b"]->generation(), 2u);
  EXPECT_EQ(platforms_["b"]->metrics_listen, Endpoint::parse("[::1]:9100", false));
  ASSERT_TRUE(platforms_["b"]->scrape());
  moved.metrics = "enabled = false\n";
  writeConf("b", moved);
  reload("b");
  EXPECT_EQ(directors_["b"]->generation(), 3u);
  EXPECT_FALSE(platforms_["b"]->scrape());
}

// `journalctl TANDEM_EVENT=takeover` (issue 15): the records beside the log lines.
std::string fieldOf(const JournalEvent& e, const std::string& name) {
  for (const auto& [n, v] : e.fields) {
    if (n == name) return v;
  }
  return "<none>";
}

TEST_F(Cluster, JournalRecordsOfRolesTakeoversRealServersAndAdminCarryTheirFields) {
  conf_.vips = {"198.51.100.50/32", "198.51.100.51/32"};
  conf_.check = "type = \"tcp\"\ninterval = \"1s\"\ntimeout = \"500ms\"\nrise = 1\nfall = 1\n";
  const Endpoint rs = *Endpoint::parse("203.0.113.11:80", false);
  world_.checks().servers[rs] = fakes::Server::kAlive;
  build(kPair);
  startAll();
  ASSERT_TRUE(runUntil(3s, [&] { return role("a") == Role::kActive; }));
  run(1s);
  kill("a");
  ASSERT_TRUE(runUntil(3s, [&] { return role("b") == Role::kActive; }));
  world_.checks().servers[rs] = fakes::Server::kDead;
  run(3s);
  directors_["b"]->audited("standby", "uid=0 (root)", "{\"node\":\"b\"}", "ok");

  std::map<JournalKind, std::vector<JournalEvent>> by;
  for (const JournalEvent& e : platforms_["b"]->log().events()) by[e.kind].push_back(e);
  ASSERT_EQ(by[JournalKind::kStart].size(), 1u);
  EXPECT_EQ(fieldOf(by[JournalKind::kStart][0], "TANDEM_NODE"), "b");
  EXPECT_EQ(fieldOf(by[JournalKind::kStart][0], "TANDEM_CLUSTER"), "t");

  ASSERT_EQ(by[JournalKind::kTakeover].size(), 1u);
  const JournalEvent& takeover = by[JournalKind::kTakeover][0];
  EXPECT_EQ(fieldOf(takeover, "TANDEM_NODE"), "b");
  std::vector<std::string> vips;
  for (const auto& [n, v] : takeover.fields) {
    if (n == "TANDEM_VIP") vips.push_back(v);
  }
  EXPECT_EQ(vips, (std::vector<std::string>{"198.51.100.50/32", "198.51.100.51/32"}));
  EXPECT_NE(fieldOf(takeover, "TANDEM_DURATION_MS"), "<none>");
  EXPECT_NE(takeover.line.find("took over the services took_ms="), std::string::npos);

  std::vector<std::string> roles;
  for (const JournalEvent& e : by[JournalKind::kRole]) {
    roles.push_back(fieldOf(e, "TANDEM_PREVIOUS_ROLE") + ">" + fieldOf(e, "TANDEM_ROLE"));
  }
  // Every step as the core made it, even those reached within one event.
  EXPECT_EQ(roles.back(), "TAKING_OVER>ACTIVE");
  EXPECT_EQ(fieldOf(by[JournalKind::kRole].back(), "TANDEM_ROLE_EVENT"), "resources-started");
  EXPECT_EQ(roles.front(), "INIT>BACKUP");

  ASSERT_EQ(by[JournalKind::kRealServer].size(), 1u);
  const JournalEvent& down = by[JournalKind::kRealServer][0];
  EXPECT_EQ(fieldOf(down, "TANDEM_VS"), "web");
  EXPECT_EQ(fieldOf(down, "TANDEM_RS"), "203.0.113.11:80");
  EXPECT_EQ(fieldOf(down, "TANDEM_HEALTH"), "down");
  EXPECT_EQ(down.level, LogLevel::kWarning);

  ASSERT_EQ(by[JournalKind::kAdmin].size(), 1u);
  EXPECT_EQ(fieldOf(by[JournalKind::kAdmin][0], "TANDEM_USER"), "uid=0 (root)");
  EXPECT_EQ(fieldOf(by[JournalKind::kAdmin][0], "TANDEM_REQUEST"), "standby");
  // Every kind has its own message ID, 32 hex digits.
  std::set<std::string_view> ids;
  for (JournalKind k : {JournalKind::kStart, JournalKind::kRole, JournalKind::kTakeover,
                        JournalKind::kRealServer, JournalKind::kAdmin}) {
    ids.insert(journalMessageId(k));
    EXPECT_EQ(journalMessageId(k).size(), 32u);
  }
  EXPECT_EQ(ids.size(), 5u);
}

}  // namespace
}  // namespace tandem::director
