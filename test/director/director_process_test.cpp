// The director as a process, without a cluster, on simulated time: a fake service manager, a fake
// log and an in-memory file system. Nothing here sleeps; the watchdog is checked by moving the
// simulated clock.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "director/director.h"
#include "director/fake_platform.h"

namespace tandem::director {
namespace {

using namespace std::chrono_literals;
using fakes::FakeNotifier;
using platform::LogLevel;

constexpr char kPath[] = "/etc/tandem/tandem.conf";
constexpr char kKeyPath[] = "/etc/tandem/authkey";

constexpr char kGood[] =
    "[cluster]\nname = \"t\"\n[[cluster.key]]\nid = 1\nfile = \"authkey\"\n"
    "[[node]]\nname = \"a\"\ninterfaces = [\"eth0\"]\n";

constexpr char kGoodTwoNodes[] =
    "[cluster]\nname = \"t\"\n[[cluster.key]]\nid = 1\nfile = \"authkey\"\n"
    "[[node]]\nname = \"a\"\ninterfaces = [\"eth0\"]\n"
    "[[node]]\nname = \"b\"\ninterfaces = [\"eth0\"]\n"
    "[daemon]\nlog_level = \"debug\"\n";

// As kGoodTwoNodes, but for another cluster: a reload cannot rename the cluster.
constexpr char kRenamed[] =
    "[cluster]\nname = \"u\"\n[[cluster.key]]\nid = 1\nfile = \"authkey\"\n"
    "[[node]]\nname = \"a\"\ninterfaces = [\"eth0\"]\n";

// Two errors: a string priority and a string where a list of interfaces belongs.
constexpr char kBroken[] =
    "[cluster]\nname = \"t\"\n[[cluster.key]]\nid = 1\nfile = \"authkey\"\n"
    "[[node]]\nname = \"a\"\npriority = \"high\"\ninterfaces = \"eth0\"\n";

// Valid, with a warning: failback_delay means nothing under the default manual failback.
constexpr char kWithWarning[] =
    "[cluster]\nname = \"t\"\nfailback_delay = \"5s\"\n[[cluster.key]]\nid = 1\n"
    "file = \"authkey\"\n[[node]]\nname = \"a\"\ninterfaces = [\"eth0\"]\n";

class DaemonTest : public ::testing::Test {
 protected:
  DaemonTest() {
    files_.write(kKeyPath, std::string(32, 'k'), 0600);
    files_.write(kPath, kGood);
  }

  Director& makeDaemon(std::optional<Millis> watchdog = std::nullopt,
                       std::optional<int> main_pid = std::nullopt) {
    DirectorOptions options;
    options.config_path = kPath;
    options.watchdog_period = watchdog;
    options.main_pid = main_pid;
    options.with_cluster = false;
    daemon_ = std::make_unique<Director>(platform_, options);
    return *daemon_;
  }

  Director& startDaemon(std::optional<Millis> watchdog = std::nullopt) {
    Director& d = makeDaemon(watchdog);
    auto started = d.start();
    EXPECT_TRUE(started.has_value()) << (started ? "" : started.error().message);
    return d;
  }

  const std::string& lastStatus() const { return notifier_.last().at("STATUS"); }

  // Declared first so that it outlives the daemon's timers and watches.
  fakes::SimDispatcher sim_;
  fakes::FakeWorld world_{sim_};
  fakes::FakePlatform platform_{world_, "a", 1, *IpAddress::parse("198.51.100.1"), {}};
  FakeNotifier& notifier_ = platform_.notifications();
  fakes::FakeLogger& logger_ = platform_.log();
  fakes::FakeFileSystem& files_ = platform_.fileSystem();
  fakes::NodeDispatcher& node_ = platform_.nodeDispatcher();
  std::unique_ptr<Director> daemon_;
};

TEST_F(DaemonTest, StartSendsReadyThenAStatusNamingClusterNodesAndGeneration) {
  Director& d = startDaemon();

  ASSERT_EQ(notifier_.messages().size(), 1u);
  EXPECT_EQ(notifier_.raw()[0].rfind("READY=1\nSTATUS=", 0), 0u) << notifier_.raw()[0];
  EXPECT_EQ(lastStatus(), "Running config generation 1: cluster t, 1 node");
  EXPECT_EQ(d.generation(), 1u);
  EXPECT_EQ(d.config().cluster.name, "t");
  EXPECT_EQ(logger_.count(LogLevel::kNotice,
                          "started file=/etc/tandem/tandem.conf generation=1 "
                          "cluster=t nodes=1"),
            1u);
}

TEST_F(DaemonTest, StartWatchesTermIntAndHup) {
  startDaemon();

  EXPECT_TRUE(node_.watchesSignal(loop::Signal::kTerminate));
  EXPECT_TRUE(node_.watchesSignal(loop::Signal::kInterrupt));
  EXPECT_TRUE(node_.watchesSignal(loop::Signal::kHangup));
}

TEST_F(DaemonTest, StartWithAnInvalidConfigFailsLogsEveryErrorAndNeverSaysReady) {
  files_.write(kPath, kBroken);
  Director& d = makeDaemon(1s);

  auto started = d.start();

  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(started.error().message, "/etc/tandem/tandem.conf has 2 errors");
  EXPECT_EQ(logger_.count(LogLevel::kError, "/etc/tandem/tandem.conf:8:12: "), 1u);
  EXPECT_EQ(logger_.count(LogLevel::kError, "/etc/tandem/tandem.conf:9:14: "), 1u);
  EXPECT_EQ(notifier_.count("READY"), 0u);
  EXPECT_EQ(lastStatus(), "Not started: 2 errors in /etc/tandem/tandem.conf");
  EXPECT_FALSE(node_.watchesSignal(loop::Signal::kTerminate));
  EXPECT_EQ(sim_.armedTimers(), 0u);
}

TEST_F(DaemonTest, StartFailsWhenTheConfigFileIsMissing) {
  files_.remove(kPath);

  auto started = makeDaemon().start();

  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(logger_.count(LogLevel::kError, "/etc/tandem/tandem.conf"), 2u);  // cause, verdict
  EXPECT_EQ(notifier_.count("READY"), 0u);
}

TEST_F(DaemonTest, StartLogsWarningsAndRuns) {
  files_.write(kPath, kWithWarning);

  startDaemon();

  EXPECT_EQ(logger_.count(LogLevel::kWarning, "/etc/tandem/tandem.conf:3:"), 1u);
  EXPECT_EQ(notifier_.last().at("READY"), "1");
}

TEST_F(DaemonTest, StartAppliesTheConfiguredLogLevel) {
  files_.write(kPath, kGoodTwoNodes);

  startDaemon();

  EXPECT_EQ(logger_.level(), LogLevel::kDebug);
}

TEST_F(DaemonTest, ReadyNamesTheMainPidWhenTheDaemonForkedAway) {
  ASSERT_TRUE(makeDaemon(std::nullopt, 4242).start().has_value());

  EXPECT_EQ(notifier_.last().at("MAINPID"), "4242");
}

TEST_F(DaemonTest, PingsTheWatchdogAtHalfThePeriod) {
  startDaemon(1000ms);

  sim_.advance(499ms);
  EXPECT_EQ(notifier_.count("WATCHDOG"), 0u);
  sim_.advance(1ms);
  EXPECT_EQ(notifier_.count("WATCHDOG"), 1u);
  EXPECT_EQ(notifier_.raw().back(), "WATCHDOG=1");
  sim_.advance(499ms);
  EXPECT_EQ(notifier_.count("WATCHDOG"), 1u);
  sim_.advance(1ms);
  EXPECT_EQ(notifier_.count("WATCHDOG"), 2u);
  sim_.advance(1h);
  EXPECT_EQ(notifier_.count("WATCHDOG"), 2u + 7200u);
}

TEST_F(DaemonTest, SendsNoWatchdogPingsWithoutAPeriod) {
  startDaemon();

  sim_.advance(1h);

  EXPECT_EQ(notifier_.count("WATCHDOG"), 0u);
  EXPECT_EQ(sim_.armedTimers(), 0u);
}

TEST_F(DaemonTest, HupWithABrokenConfigKeepsTheRunningConfig) {
  Director& d = startDaemon();
  files_.write(kPath, kBroken);

  ASSERT_TRUE(node_.deliver(loop::Signal::kHangup));

  EXPECT_EQ(d.generation(), 1u);
  EXPECT_EQ(d.config().cluster.name, "t");
  EXPECT_EQ(d.config().nodes.at(0).priority, 100);
  ASSERT_EQ(notifier_.messages().size(), 3u);
  EXPECT_EQ(notifier_.messages()[1].at("RELOADING"), "1");
  EXPECT_EQ(notifier_.last().at("READY"), "1");
  EXPECT_EQ(lastStatus(),
            "Reload rejected (2 errors in /etc/tandem/tandem.conf), keeping config generation 1: "
            "cluster t, 1 node");
  EXPECT_EQ(logger_.count(LogLevel::kError, "/etc/tandem/tandem.conf:8:12: "), 1u);
  EXPECT_EQ(logger_.count(LogLevel::kError, "/etc/tandem/tandem.conf:9:14: "), 1u);
  EXPECT_EQ(logger_.count(LogLevel::kError,
                          "config reload rejected "
                          "file=/etc/tandem/tandem.conf errors=2 "
                          "kept_generation=1"),
            1u);
  EXPECT_FALSE(node_.stopped());
}

TEST_F(DaemonTest, HupWithAGoodConfigSwapsItInAndBumpsTheGeneration) {
  Director& d = startDaemon();
  files_.write(kPath, kGoodTwoNodes);

  ASSERT_TRUE(node_.deliver(loop::Signal::kHangup));

  EXPECT_EQ(d.generation(), 2u);
  EXPECT_EQ(d.config().nodes.size(), 2u);
  EXPECT_EQ(notifier_.last().at("READY"), "1");
  EXPECT_EQ(lastStatus(),
            "Running config generation 2: cluster t, 2 nodes (reloaded: nodes,daemon)");
  EXPECT_EQ(logger_.level(), LogLevel::kDebug);
  EXPECT_EQ(logger_.count(LogLevel::kNotice, "config reloaded generation=2 cluster=t nodes=2"), 1u);
  EXPECT_EQ(logger_.count(LogLevel::kNotice, "reload nodes: added b priority 100"), 1u);
  EXPECT_EQ(logger_.count(LogLevel::kNotice, "reload daemon: log_level \"info\" -> \"debug\""), 1u);
}

TEST_F(DaemonTest, HupThatRenamesTheClusterIsRefusedNamingBothNames) {
  Director& d = startDaemon();
  files_.write(kPath, kRenamed);

  ASSERT_TRUE(node_.deliver(loop::Signal::kHangup));

  EXPECT_EQ(d.generation(), 1u);
  EXPECT_EQ(d.config().cluster.name, "t");
  EXPECT_EQ(logger_.count(LogLevel::kError,
                          "cluster.name cannot change while tandemd runs: running \"t\", new "
                          "\"u\""),
            1u);
  EXPECT_EQ(lastStatus(),
            "Reload refused (cluster.name cannot change while tandemd runs), keeping config "
            "generation 1: cluster t, 1 node");
}

TEST_F(DaemonTest, AFixedConfigIsAcceptedAfterARejectedOne) {
  Director& d = startDaemon();
  files_.write(kPath, kBroken);
  ASSERT_TRUE(node_.deliver(loop::Signal::kHangup));
  files_.write(kPath, kGoodTwoNodes);

  ASSERT_TRUE(node_.deliver(loop::Signal::kHangup));

  EXPECT_EQ(d.generation(), 2u);  // a rejected reload does not use up a generation
  EXPECT_EQ(d.config().nodes.size(), 2u);
}

TEST_F(DaemonTest, ReloadingCarriesTheMonotonicClockInMicroseconds) {
  startDaemon();
  sim_.advance(1234ms);

  ASSERT_TRUE(node_.deliver(loop::Signal::kHangup));

  // The simulated clock starts at one hour.
  EXPECT_EQ(notifier_.raw()[1], "RELOADING=1\nMONOTONIC_USEC=3601234000");
}

TEST_F(DaemonTest, WatchdogKeepsPingingThroughARejectedReload) {
  startDaemon(2s);
  files_.write(kPath, kBroken);
  sim_.advance(1500ms);
  ASSERT_TRUE(node_.deliver(loop::Signal::kHangup));

  sim_.advance(10s);

  EXPECT_EQ(notifier_.count("WATCHDOG"), 11u);  // every second for 11.5 s
}

TEST_F(DaemonTest, TermSendsStoppingAndStopsTheLoop) {
  Director& d = startDaemon();

  ASSERT_TRUE(node_.deliver(loop::Signal::kTerminate));

  EXPECT_EQ(notifier_.last().at("STOPPING"), "1");
  EXPECT_EQ(lastStatus(), "Stopping on SIGTERM");
  EXPECT_TRUE(d.stopping());
  EXPECT_TRUE(node_.stopped());
  EXPECT_EQ(logger_.count(LogLevel::kNotice, "stopping signal=SIGTERM"), 1u);
}

TEST_F(DaemonTest, IntStopsLikeTerm) {
  startDaemon();

  ASSERT_TRUE(node_.deliver(loop::Signal::kInterrupt));

  EXPECT_EQ(notifier_.last().at("STOPPING"), "1");
  EXPECT_TRUE(node_.stopped());
}

TEST_F(DaemonTest, NoWatchdogPingsAfterStopping) {
  startDaemon(1s);
  sim_.advance(600ms);
  ASSERT_TRUE(node_.deliver(loop::Signal::kTerminate));

  sim_.advance(10s);

  EXPECT_EQ(notifier_.count("WATCHDOG"), 1u);
  EXPECT_EQ(notifier_.count("STOPPING"), 1u);
}

TEST_F(DaemonTest, SignalsWhileStoppingChangeNothing) {
  Director& d = startDaemon();
  ASSERT_TRUE(node_.deliver(loop::Signal::kTerminate));
  files_.write(kPath, kGoodTwoNodes);

  ASSERT_TRUE(node_.deliver(loop::Signal::kHangup));
  ASSERT_TRUE(node_.deliver(loop::Signal::kTerminate));

  EXPECT_EQ(d.generation(), 1u);
  EXPECT_EQ(notifier_.count("STOPPING"), 1u);
  EXPECT_EQ(notifier_.count("RELOADING"), 0u);
}

}  // namespace
}  // namespace tandem::director
