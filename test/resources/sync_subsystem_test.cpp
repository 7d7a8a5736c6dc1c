#include "sync/sync_subsystem.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "config/config_diff.h"
#include "fakes/sim_dispatcher.h"
#include "resources/fake_sync_kernel.h"

namespace tandem::resources::sync {
namespace {

using namespace std::chrono_literals;
using ipvs::SyncDaemon;
using ipvs::SyncState;

struct Line {
  LogLevel level;
  std::string text;
};

class SyncSubsystemTest : public ::testing::Test {
 protected:
  SyncSubsystemTest() {
    cfg_.sync.enabled = true;
    cfg_.sync.interface = "eth1";
    cfg_.sync.sync_id = 7;
  }

  std::unique_ptr<SyncSubsystem> make(Millis latency = 1ms) {
    kernel_.setLatency(latency);
    SyncDeps deps{
        sim_,
        [this]() -> Result<std::unique_ptr<ipvs::SyncKernel>> {
          if (open_error_) return fail(*open_error_);
          ++opens_;
          return std::unique_ptr<ipvs::SyncKernel>(
              std::make_unique<fakes::SyncKernelView>(kernel_));
        },
        [this](LogLevel l, const std::string& line) {
          log_.push_back({l, line});
        },
        [this] { return static_cast<int64_t>(1000000 + sim_.now().time_since_epoch().count()); },
        [this] { return connections_; },
        [this](uint64_t n, bool backup) { reported_ = std::make_pair(n, backup); },
        [this] { return templates_; }};
    return std::make_unique<SyncSubsystem>(std::move(deps), "d1");
  }

  void startWith(SyncSubsystem& s) {
    s.configure(cfg_, nullptr, config::ReloadDiff{});
    ASSERT_TRUE(s.start());
    sim_.advance(50ms);
  }

  void reload(SyncSubsystem& s, const config::Config& next) {
    const config::Config running = cfg_;
    s.configure(next, &running, config::diffReload(running, next, "a"));
    cfg_ = next;
    sim_.advance(50ms);
  }

  size_t count(LogLevel level, const std::string& part) const {
    size_t n = 0;
    for (const auto& l : log_) n += (l.level == level && l.text.find(part) != std::string::npos);
    return n;
  }

  Resource& master(SyncSubsystem& s) {
    auto held = s.held();
    EXPECT_EQ(held.size(), 1u);
    EXPECT_EQ(held.at(0).stage, Stage::kSync);
    return *held.at(0).resource;
  }

  bool runs(SyncState st) const { return kernel_.daemon(st).has_value(); }

  fakes::SimDispatcher sim_;
  fakes::FakeSyncKernel kernel_{sim_};
  std::optional<Error> open_error_;
  int opens_ = 0;
  std::vector<Line> log_;
  config::Config cfg_;
  uint64_t connections_ = 0;
  uint64_t templates_ = 0;
  std::optional<std::pair<uint64_t, bool>> reported_;
};

TEST_F(SyncSubsystemTest, TheBackupRunsOnEveryDirectorFromTheStart) {
  auto s = make();
  startWith(*s);
  ASSERT_TRUE(runs(SyncState::kBackup));
  EXPECT_FALSE(runs(SyncState::kMaster));
  const SyncDaemon b = kernel_.daemon(SyncState::kBackup).value();
  EXPECT_EQ(b.interface, "eth1");
  EXPECT_EQ(b.sync_id, 7u);
  EXPECT_EQ(b.group.toString(), "224.0.0.81");
  EXPECT_EQ(b.port, 8848);
  EXPECT_EQ(b.ttl, 1);
  EXPECT_EQ(b.max_len, 1472);
  EXPECT_EQ(count(LogLevel::kNotice, "started the IPVS sync backup daemon on eth1"), 1u);
  const auto st = s->status()["sync"];
  EXPECT_EQ(st["daemons"][0]["state"], "backup");
  EXPECT_EQ(st["daemons"][0]["running"], true);
  EXPECT_EQ(st["daemons"][1]["running"], false);
  EXPECT_EQ(st["error"], "");
}

TEST_F(SyncSubsystemTest, EachPassReportsTheTableAndTheBackupForTheHeartbeats) {
  connections_ = 420;
  templates_ = 17;
  auto s = make();
  startWith(*s);
  ASSERT_TRUE(reported_);
  EXPECT_EQ(*reported_, std::make_pair(uint64_t{420}, true));
  EXPECT_EQ(s->status()["sync"]["connections"], 420);
  EXPECT_EQ(s->status()["sync"]["templates"], 17) << "the status counts the templates apart";
  kernel_.killDaemon(SyncState::kBackup);
  kernel_.refuseStarts(1);
  connections_ = 421;
  sim_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_EQ(*reported_, std::make_pair(uint64_t{421}, false)) << "a failback must not trust it";
}

TEST_F(SyncSubsystemTest, TheActiveHoldsTheMasterAndReleasesIt) {
  auto s = make();
  startWith(*s);
  Resource& m = master(*s);
  std::optional<Result<void>> started;
  m.start([&](Result<void> r) { started = r; });
  EXPECT_FALSE(started) << "answered from the loop, not before start() returns";
  sim_.advance(50ms);
  ASSERT_TRUE(started && *started);
  EXPECT_TRUE(runs(SyncState::kMaster));
  EXPECT_TRUE(runs(SyncState::kBackup)) << "the backup keeps receiving on the ACTIVE too";
  EXPECT_TRUE(m.present());
  std::optional<Result<void>> stopped;
  m.stop([&](Result<void> r) { stopped = r; });
  sim_.advance(50ms);
  ASSERT_TRUE(stopped && *stopped);
  EXPECT_FALSE(runs(SyncState::kMaster));
  EXPECT_TRUE(runs(SyncState::kBackup));
  EXPECT_FALSE(m.present());
}

TEST_F(SyncSubsystemTest, ADaemonStoppedBehindTandemsBackIsRestartedAndLogged) {
  auto s = make();
  startWith(*s);
  master(*s).start([](Result<void>) {});
  sim_.advance(50ms);
  kernel_.killDaemon(SyncState::kBackup);  // ipvsadm --stop-daemon backup
  kernel_.killDaemon(SyncState::kMaster);
  sim_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_TRUE(runs(SyncState::kBackup));
  EXPECT_TRUE(runs(SyncState::kMaster));
  EXPECT_EQ(s->restarts(), 2u);
  EXPECT_EQ(count(LogLevel::kWarning,
                  "backup daemon on eth1 (sync id 7, 224.0.0.81:8848, ttl 1) "
                  "was stopped behind tandem's back"),
            1u);
  EXPECT_EQ(count(LogLevel::kWarning, "master daemon"), 1u);
  // In place: the next passes change nothing.
  const size_t starts = kernel_.starts();
  sim_.advance(cfg_.ipvs.monitor_interval * 3);
  EXPECT_EQ(kernel_.starts(), starts);
  EXPECT_EQ(kernel_.stops(), 0u);
}

TEST_F(SyncSubsystemTest, TheClampedMessageLengthIsNotADifference) {
  cfg_.sync.max_message_length = 9000;  // the fake's MTU keeps 1472
  auto s = make();
  startWith(*s);
  sim_.advance(cfg_.ipvs.monitor_interval * 3);
  EXPECT_EQ(kernel_.starts(), 1u);
  EXPECT_EQ(kernel_.stops(), 0u);
}

TEST_F(SyncSubsystemTest, AReloadThatChangesTheDaemonRestartsIt) {
  auto s = make();
  startWith(*s);
  master(*s).start([](Result<void>) {});
  sim_.advance(50ms);
  config::Config next = cfg_;
  next.sync.sync_id = 9;
  reload(*s, next);
  EXPECT_EQ(kernel_.daemon(SyncState::kBackup)->sync_id, 9u);
  EXPECT_EQ(kernel_.daemon(SyncState::kMaster)->sync_id, 9u);
  EXPECT_EQ(kernel_.stops(), 2u);
  EXPECT_EQ(s->restarts(), 0u) << "tandem stopped them itself";
  // The length alone: the kernel reports what it clamped, so a reload restarts explicitly.
  next.sync.max_message_length = 1200;
  reload(*s, next);
  EXPECT_EQ(kernel_.stops(), 4u);
  EXPECT_EQ(kernel_.daemon(SyncState::kBackup)->max_len, 1200);
  // A reload that does not touch [sync] touches no daemon.
  next.ipvs.tcp_timeout = Millis(900000);
  reload(*s, next);
  EXPECT_EQ(kernel_.stops(), 4u);
  EXPECT_EQ(kernel_.starts(), 6u);
}

TEST_F(SyncSubsystemTest, DisablingStopsWhatTandemRanAndLeavesTheRest) {
  auto s = make();
  startWith(*s);
  master(*s).start([](Result<void>) {});
  sim_.advance(50ms);
  config::Config next = cfg_;
  next.sync.enabled = false;
  reload(*s, next);
  EXPECT_FALSE(runs(SyncState::kBackup));
  EXPECT_FALSE(runs(SyncState::kMaster));
  EXPECT_TRUE(s->held().empty());
  // A daemon an operator starts by hand while sync is off stays.
  kernel_.setDaemons({SyncDaemon{SyncState::kBackup, "eth2", 3, 1472, {}, 0, 0}});
  sim_.advance(cfg_.ipvs.monitor_interval * 3);
  EXPECT_TRUE(runs(SyncState::kBackup));
}

TEST_F(SyncSubsystemTest, SyncDisabledAtStartTouchesNothing) {
  cfg_.sync.enabled = false;
  kernel_.setDaemons({SyncDaemon{SyncState::kMaster, "eth2", 3, 1472, {}, 0, 0}});
  auto s = make();
  startWith(*s);
  sim_.advance(cfg_.ipvs.monitor_interval * 2);
  EXPECT_EQ(opens_, 0);
  EXPECT_TRUE(runs(SyncState::kMaster));
  EXPECT_TRUE(s->held().empty());
}

TEST_F(SyncSubsystemTest, ARefusedMasterIsLoggedAndDoesNotFailTheTakeover) {
  auto s = make();
  startWith(*s);
  kernel_.failNext(Error{ErrorCode::kUnavailable, "No such device"});  // the list
  std::optional<Result<void>> started;
  master(*s).start([&](Result<void> r) { started = r; });
  sim_.advance(50ms);
  ASSERT_TRUE(started);
  EXPECT_TRUE(*started) << "the VIPs still come up";
  EXPECT_FALSE(runs(SyncState::kMaster));
  EXPECT_EQ(count(LogLevel::kError, "cannot read the IPVS sync daemons: No such device"), 1u);
  EXPECT_NE(s->status()["sync"]["error"], "");
  // Tried again at the next interval, and the recovery is said once.
  sim_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_TRUE(runs(SyncState::kMaster));
  EXPECT_EQ(s->status()["sync"]["error"], "");
  EXPECT_EQ(count(LogLevel::kNotice, "run as configured again"), 1u);
}

TEST_F(SyncSubsystemTest, AKernelWithoutIpvsIsOneErrorAndRetried) {
  open_error_ = Error{ErrorCode::kUnavailable, "this kernel has no IPVS"};
  auto s = make();
  startWith(*s);
  sim_.advance(cfg_.ipvs.monitor_interval * 3);
  EXPECT_EQ(count(LogLevel::kError, "cannot drive the IPVS sync daemons: this kernel has no IPVS"),
            1u);
  open_error_.reset();
  sim_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_EQ(opens_, 1);
  EXPECT_TRUE(runs(SyncState::kBackup));
}

TEST_F(SyncSubsystemTest, RequestsDuringAPassAreServedByTheNextOne) {
  auto s = make(30ms);  // every kernel answer takes 30 ms
  s->configure(cfg_, nullptr, config::ReloadDiff{});
  ASSERT_TRUE(s->start());
  int answered = 0;
  master(*s).start([&](Result<void>) { ++answered; });  // the first pass still runs
  master(*s).stop([&](Result<void>) { ++answered; });
  master(*s).start([&](Result<void>) { ++answered; });
  sim_.advance(1s);
  EXPECT_EQ(answered, 3);
  EXPECT_TRUE(runs(SyncState::kMaster)) << "the last request wins";
  EXPECT_TRUE(runs(SyncState::kBackup));
  EXPECT_EQ(kernel_.stops(), 0u) << "one pass saw start-stop-start as start";
}

TEST_F(SyncSubsystemTest, ShutdownLeavesTheBackupRunningAndCallsNothingBack) {
  auto s = make(30ms);
  startWith(*s);
  sim_.advance(200ms);
  ASSERT_TRUE(runs(SyncState::kBackup));
  bool called = false;
  master(*s).start([&](Result<void>) { called = true; });
  s->shutdown();
  sim_.advance(1s);
  EXPECT_FALSE(called);
  EXPECT_TRUE(runs(SyncState::kBackup));
  s.reset();
  sim_.advance(cfg_.ipvs.monitor_interval * 2);
}

}  // namespace
}  // namespace tandem::resources::sync
