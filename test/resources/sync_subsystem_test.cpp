#include "sync/sync_subsystem.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "config/config_diff.h"
#include "fakes/sim_dispatcher.h"
#include "resources/fake_sync_kernel.h"
#include "resources/fake_sync_tap.h"
#include "sync/sync_message.h"

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
    SyncDeps deps{sim_,
                  [this]() -> Result<std::unique_ptr<ipvs::SyncKernel>> {
                    if (open_error_) return fail(*open_error_);
                    ++opens_;
                    return std::unique_ptr<ipvs::SyncKernel>(
                        std::make_unique<fakes::SyncKernelView>(kernel_));
                  },
                  [this](LogLevel l, const std::string& line) {
                    log_.push_back({l, line});
                  },
                  [this] { return wallNow(); },
                  [this] { return connections_; },
                  [this] { return templates_; },
                  [this](const SyncReport& r) {
                    reported_ = r;
                    ++reports_;
                  },
                  taps_.opener()};
    return std::make_unique<SyncSubsystem>(std::move(deps), "d1");
  }

  // The wall clock in ms: the simulated time, a million ms after the epoch.
  int64_t wallNow() const {
    return 1000000 + std::chrono::duration_cast<Millis>(sim_.now().time_since_epoch()).count();
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
  std::optional<SyncReport> reported_;
  int reports_ = 0;
  fakes::FakeSyncTaps taps_;
  const IpAddress peer_ = *IpAddress::parse("198.51.100.2");
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
  EXPECT_EQ(reported_->connections, 420u);
  EXPECT_EQ(reported_->templates, 17u);
  EXPECT_TRUE(reported_->backup_running);
  EXPECT_EQ(reported_->heard_ago_ms, std::nullopt) << "nothing heard yet";
  EXPECT_EQ(s->status()["sync"]["connections"], 420);
  EXPECT_EQ(s->status()["sync"]["templates"], 17) << "the status counts the templates apart";
  kernel_.killDaemon(SyncState::kBackup);
  kernel_.refuseStarts(1);
  connections_ = 421;
  sim_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_EQ(reported_->connections, 421u);
  EXPECT_FALSE(reported_->backup_running) << "a failback must not trust it";
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

namespace heard {

TEST(SyncMessage, VersionOneHeaderGivesItsSyncIdAndConnections) {
  auto m = parseSyncMessage(fakes::syncMessageV1(7, 42, 1200));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->version, 1);
  EXPECT_EQ(m->sync_id, 7);
  EXPECT_EQ(m->size, 1200);
  EXPECT_EQ(m->connections, 42);
}

TEST(SyncMessage, AnythingElseOfFourBytesIsVersionZero) {
  // nr_conns 3, sync id 5, size 4.
  auto m = parseSyncMessage(std::vector<uint8_t>{3, 5, 0, 4});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->version, 0);
  EXPECT_EQ(m->sync_id, 5);
  EXPECT_EQ(m->connections, 3);
  // A version 1 header with a non-zero spare is what the kernel reads as version 0 too.
  auto v1 = fakes::syncMessageV1(7, 42);
  v1[7] = 1;
  auto m0 = parseSyncMessage(v1);
  ASSERT_TRUE(m0);
  EXPECT_EQ(m0->version, 0);
  EXPECT_EQ(m0->connections, 0) << "byte 0, the reserved field, is version 0's count";
}

TEST(SyncMessage, ShortOrMissizedDatagramsAreNamed) {
  auto shortOne = parseSyncMessage(std::vector<uint8_t>{0, 7, 0});
  ASSERT_FALSE(shortOne);
  EXPECT_EQ(shortOne.error().message, "3-byte datagram, shorter than a sync message header");
  auto missized = fakes::syncMessageV1(7, 1, 100);
  missized.resize(60);
  auto m = parseSyncMessage(missized);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message, "60-byte datagram declares 100 bytes");
}

TEST(SyncMessage, ABackupWithSyncIdZeroTakesEveryMessage) {
  SyncMessage m;
  m.sync_id = 9;
  EXPECT_TRUE(backupTakes(0, m));
  EXPECT_TRUE(backupTakes(9, m));
  EXPECT_FALSE(backupTakes(7, m));
}

}  // namespace heard

TEST_F(SyncSubsystemTest, TheTapListensWhereTheBackupListensAndCountsWhatItHears) {
  auto s = make();
  EXPECT_FALSE(taps_.listening());
  startWith(*s);
  ASSERT_TRUE(taps_.listening());
  EXPECT_EQ(*taps_.where, kernel_.daemon(SyncState::kBackup).value());
  auto heardNow = [&] { return s->status()["sync"]["heard"]; };
  EXPECT_EQ(heardNow()["listening"], true);
  EXPECT_EQ(heardNow()["messages"], 0);
  EXPECT_TRUE(heardNow()["last_ms"].is_null()) << "nothing heard yet";
  sim_.advance(200ms);
  const int64_t at = wallNow();
  for (uint8_t n : {5, 6, 7}) ASSERT_TRUE(taps_.deliver(fakes::syncMessageV1(7, n, 400), peer_));
  const auto h = heardNow();
  EXPECT_EQ(h["messages"], 3);
  EXPECT_EQ(h["connections"], 18);
  EXPECT_EQ(h["from"], "198.51.100.2");
  EXPECT_EQ(h["last_ms"], at);
  EXPECT_EQ(h["other_sync_id"], 0);
  EXPECT_EQ(h["malformed"], 0);
  // The passes that follow keep the same socket.
  sim_.advance(cfg_.ipvs.monitor_interval * 3);
  EXPECT_EQ(taps_.opens, 1);
}

TEST_F(SyncSubsystemTest, WhatTheBackupHeardReachesTheHeartbeatsWithinASecond) {
  auto s = make();
  startWith(*s);
  ASSERT_TRUE(reported_);
  EXPECT_EQ(reported_->heard_ago_ms, std::nullopt);
  const int before = reports_;
  ASSERT_TRUE(taps_.deliver(fakes::syncMessageV1(7, 3, 400), peer_));
  EXPECT_EQ(reports_, before + 1) << "the first message heard is reported at once";
  EXPECT_EQ(reported_->heard_ago_ms, 0);
  sim_.advance(400ms);
  ASSERT_TRUE(taps_.deliver(fakes::syncMessageV1(7, 3, 400), peer_));
  EXPECT_EQ(reports_, before + 1) << "not every message: one report a second at most";
  sim_.advance(700ms);
  ASSERT_TRUE(taps_.deliver(fakes::syncMessageV1(7, 3, 400), peer_));
  EXPECT_EQ(reports_, before + 2);
  EXPECT_EQ(reported_->heard_ago_ms, 0);
  // A pass reports the age since: nothing more was heard.
  sim_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_GE(reported_->heard_ago_ms.value_or(-1), 1);
  EXPECT_LE(reported_->heard_ago_ms.value_or(-1),
            std::chrono::duration_cast<Millis>(cfg_.ipvs.monitor_interval).count());
}

TEST_F(SyncSubsystemTest, MessagesForAnotherSyncIdAreCountedApartAndNamedOnce) {
  auto s = make();
  startWith(*s);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(taps_.deliver(fakes::syncMessageV1(9, 4), peer_));
  const auto h = s->status()["sync"]["heard"];
  EXPECT_EQ(h["messages"], 0) << "the kernel drops them: they are not what the backup heard";
  EXPECT_EQ(h["other_sync_id"], 3);
  EXPECT_EQ(h["last_other_sync_id"], 9);
  EXPECT_EQ(count(LogLevel::kNotice,
                  "sync messages for sync id 9 from 198.51.100.2 reach the backup daemon on "
                  "eth1, which takes only sync id 7 and drops them"),
            1u);
  // Another id is named once too.
  ASSERT_TRUE(taps_.deliver(fakes::syncMessageV1(11, 4), peer_));
  EXPECT_EQ(count(LogLevel::kNotice, "sync messages for sync id"), 2u);
}

TEST_F(SyncSubsystemTest, GarbageOnTheGroupIsCountedAndLoggedAtMostOnceAMinute) {
  auto s = make();
  startWith(*s);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(taps_.deliver({1, 2, 3}, peer_));
  auto h = s->status()["sync"]["heard"];
  EXPECT_EQ(h["malformed"], 5);
  EXPECT_EQ(h["last_malformed"],
            "from 198.51.100.2: 3-byte datagram, shorter than a sync message header");
  EXPECT_EQ(count(LogLevel::kWarning, "is no sync message"), 1u);
  sim_.advance(std::chrono::minutes(1));
  ASSERT_TRUE(taps_.deliver({1, 2, 3}, peer_));
  EXPECT_EQ(count(LogLevel::kWarning, "is no sync message"), 2u);
  EXPECT_EQ(s->status()["sync"]["heard"]["messages"], 0);
}

TEST_F(SyncSubsystemTest, TheTapFollowsTheBackupThroughReloads) {
  auto s = make();
  startWith(*s);
  config::Config next = cfg_;
  next.sync.sync_id = 9;
  reload(*s, next);
  ASSERT_TRUE(taps_.listening());
  EXPECT_EQ(taps_.opens, 2);
  EXPECT_EQ(taps_.where->sync_id, 9u);
  ASSERT_TRUE(taps_.deliver(fakes::syncMessageV1(9, 2), peer_));
  EXPECT_EQ(s->status()["sync"]["heard"]["messages"], 1);
  next.sync.enabled = false;
  reload(*s, next);
  EXPECT_FALSE(taps_.listening()) << "no backup, nothing to listen beside";
  EXPECT_EQ(s->status()["sync"]["heard"]["listening"], false);
  EXPECT_EQ(s->status()["sync"]["heard"]["messages"], 1) << "what was heard stays counted";
}

TEST_F(SyncSubsystemTest, ATapThatCannotOpenIsOneWarningAndTriedAgainEachPass) {
  taps_.fail_open = Error{ErrorCode::kIo, "cannot listen beside the sync backup daemon"};
  auto s = make();
  startWith(*s);
  sim_.advance(cfg_.ipvs.monitor_interval * 2);
  EXPECT_GE(taps_.opens, 3);
  EXPECT_EQ(count(LogLevel::kWarning, "the backup itself is not affected"), 1u);
  EXPECT_EQ(s->status()["sync"]["heard"]["error"], "cannot listen beside the sync backup daemon");
  EXPECT_TRUE(runs(SyncState::kBackup));
  taps_.fail_open.reset();
  sim_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_TRUE(taps_.listening());
  EXPECT_EQ(s->status()["sync"]["heard"]["error"], "");
}

TEST_F(SyncSubsystemTest, ShutdownClosesTheTap) {
  auto s = make();
  startWith(*s);
  ASSERT_TRUE(taps_.listening());
  s->shutdown();
  EXPECT_FALSE(taps_.listening());
}

}  // namespace
}  // namespace tandem::resources::sync
