// The health subsystem on simulated time with a fake checker whose real servers the test kills
// and revives: the failure and success windows of the reference hold, a flapping server is
// damped, the initial state is honoured, a reload keeps what it did not change, and every change
// reaches IPVS once, logged with its reason.
#include "health/health_subsystem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config_loader.h"
#include "election/election.h"
#include "fakes/fake_file_system.h"
#include "fakes/fake_logger.h"
#include "fakes/sim_dispatcher.h"
#include "resources/fake_checker.h"
#include "resources/fake_children.h"

namespace tandem::resources::health {
namespace {

using fakes::FakeChecker;
using fakes::Server;
using World = fakes::CheckWorld;

using namespace std::chrono_literals;
using platform::LogLevel;

constexpr char kPath[] = "/etc/tandem/tandem.conf";

std::string configText(const std::string& check, int servers = 2,
                       const std::string& service_keys = "") {
  std::string t =
      "[cluster]\nname = \"t\"\n[[cluster.key]]\nid = 1\nfile = \"authkey\"\n"
      "[[node]]\nname = \"a\"\ninterfaces = [\"eth0\"]\n"
      "[[vip]]\naddress = \"198.51.100.50/24\"\ninterface = \"eth0\"\n"
      "[[virtual_server]]\nname = \"web\"\naddress = \"198.51.100.50:80\"\n" +
      service_keys + "[virtual_server.check]\n" + check;
  for (int i = 1; i <= servers; ++i) {
    t += "[[virtual_server.real_server]]\naddress = \"203.0.113." + std::to_string(20 + i) +
         "\"\nweight = 10\n";
  }
  return t;
}

config::Config load(const std::string& text) {
  fakes::FakeFileSystem files;
  files.write("/etc/tandem/authkey", std::string(32, 'k'), 0600);
  auto r = config::loadConfigText(text, kPath, files);
  EXPECT_TRUE(r.ok()) << r.diagnostics.formatAll();
  return *r.config;
}

const Endpoint kRs1 = *Endpoint::parse("203.0.113.21:80", false);
const Endpoint kRs2 = *Endpoint::parse("203.0.113.22:80", false);

// Each result decides: one failure takes a server out, one success brings it back.
const char kFastTcp[] =
    "type = \"tcp\"\ninterval = \"1s\"\ntimeout = \"500ms\"\nrise = 1\nfall = 1\n";
const char kTcp[] = "type = \"tcp\"\ninterval = \"2s\"\ntimeout = \"1s\"\nrise = 2\nfall = 3\n";

struct Change {
  std::string vs;
  Endpoint rs;
  bool up;
  loop::MonoTime at;
  std::optional<int> weight;
};

class HealthSubsystemTest : public ::testing::Test {
 protected:
  HealthSubsystemTest() {
    world_.servers[kRs1] = Server::kAlive;
    world_.servers[kRs2] = Server::kAlive;
  }

  std::unique_ptr<HealthSubsystem> make(uint16_t random = 0) {
    HealthDeps deps{
        sim_,
        [this](config::CheckType type) -> std::unique_ptr<Checker> {
          if (type == config::CheckType::kSmtp) return nullptr;  // a type not built
          return std::make_unique<FakeChecker>(world_);
        },
        [random] { return random; },
        [this] { return static_cast<uint64_t>(sim_.now().time_since_epoch().count() / 1000000); },
        logger_.sink(),
        [this](const std::string& vs, const Endpoint& rs, bool up, std::optional<int> weight) {
          changes_.push_back(Change{vs, rs, up, sim_.now(), weight});
        },
        [this](int share) { shares_.push_back(share); },
        &children_,
        "lb1",
        [this](const HealthEvent& e) { events_.push_back(e); }};
    return std::make_unique<HealthSubsystem>(std::move(deps));
  }

  // The tcp check of kTcp on rs1 (dead) and rs2, run until rs1 is reported down.
  std::unique_ptr<HealthSubsystem> startWithRs1Down() {
    auto h = make();
    world_.servers[kRs1] = Server::kDead;
    configure(*h, load(configText(kTcp)));
    sim_.advance(30s);
    return h;
  }

  // A real server changes, and the checks run for a while.
  void turn(const Endpoint& rs, Server state, Millis then = std::chrono::seconds(3)) {
    world_.servers[rs] = state;
    sim_.advance(then);
  }

  void configure(HealthSubsystem& h, const config::Config& next) {
    config::ReloadDiff diff =
        running_ ? config::diffReload(*running_, next, "a") : config::ReloadDiff{};
    h.configure(next, running_ ? &*running_ : nullptr, diff);
    running_ = next;
  }

  fakes::SimDispatcher sim_;
  fakes::SimChildren children_{sim_};
  fakes::FakeLogger logger_;
  World world_{sim_};
  std::vector<Change> changes_;
  std::vector<int> shares_;
  std::vector<HealthEvent> events_;
  std::optional<config::Config> running_;
};

TEST_F(HealthSubsystemTest, AHungServerIsTakenOutWithinTheFailureWindow) {
  auto h = make();
  configure(*h, load(configText(kTcp)));
  sim_.advance(10s);
  ASSERT_TRUE(changes_.empty()) << "healthy servers change nothing";
  EXPECT_EQ(h->up(), 2u);
  // It hangs from now; the worst case starts its first failed check at once.
  world_.servers[kRs1] = Server::kHung;
  const loop::MonoTime died = sim_.now();
  sim_.advance(20s);
  ASSERT_EQ(changes_.size(), 1u);
  EXPECT_EQ(changes_[0].vs, "web");
  EXPECT_EQ(changes_[0].rs, kRs1);
  EXPECT_FALSE(changes_[0].up);
  const auto window = failureWindow(running_->virtual_servers[0].real_servers[0].check);
  // From its death to the start of the next check is up to one interval (+ a probe's latency);
  // from there the failure window.
  const auto took = changes_[0].at - died;
  EXPECT_LE(took, window + 2s + 5ms);
  EXPECT_GE(took, window - 2s - 5ms);
  EXPECT_EQ(logger_.count(LogLevel::kWarning,
                          "real server down vs=web rs=203.0.113.21:80 "
                          "check=tcp reason=\"timed out after 1000 ms\""),
            1u);
  EXPECT_EQ(h->isUp("web", kRs1), false);
  EXPECT_EQ(h->isUp("web", kRs2), true);
  ASSERT_EQ(h->history().size(), 1u);
  EXPECT_EQ(h->history()[0].reason, "timed out after 1000 ms");
}

TEST_F(HealthSubsystemTest, ARecoveredServerIsBackWithinTheSuccessWindow) {
  auto h = startWithRs1Down();
  ASSERT_EQ(changes_.size(), 1u);
  world_.servers[kRs1] = Server::kAlive;
  const loop::MonoTime back = sim_.now();
  sim_.advance(30s);
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_TRUE(changes_[1].up);
  const auto window = successWindow(running_->virtual_servers[0].real_servers[0].check);
  EXPECT_LE(changes_[1].at - back, window + 2s);
  EXPECT_EQ(logger_.count(LogLevel::kNotice,
                          "real server up vs=web rs=203.0.113.21:80 check=tcp "
                          "reason=\"connected\""),
            1u);
}

TEST_F(HealthSubsystemTest, AServerThatFlapsFasterThanRiseAllowsIsNotPutBack) {
  auto h = make();
  configure(*h, load(configText("type = \"tcp\"\ninterval = \"1s\"\ntimeout = \"500ms\"\n"
                                "rise = 3\nfall = 1\n")));
  sim_.advance(3s);
  world_.servers[kRs1] = Server::kDead;
  sim_.advance(3s);
  ASSERT_EQ(changes_.size(), 1u);
  // Up for one check, down for the next, for a minute.
  for (int i = 0; i < 60; ++i) {
    world_.servers[kRs1] = i % 2 == 0 ? Server::kAlive : Server::kDead;
    sim_.advance(1005ms);
  }
  EXPECT_EQ(changes_.size(), 1u) << "damped: never back after a single success";
  EXPECT_EQ(h->isUp("web", kRs1), false);
}

TEST_F(HealthSubsystemTest, InitialDownStartsTheServersOutOfIpvsUntilTheirFirstSuccess) {
  auto h = make();
  configure(*h, load(configText(std::string(kTcp) + "initial = \"down\"\n")));
  ASSERT_EQ(changes_.size(), 2u) << "both reported down at once";
  EXPECT_FALSE(changes_[0].up);
  EXPECT_FALSE(changes_[1].up);
  world_.servers[kRs2] = Server::kDead;
  sim_.advance(100ms);
  ASSERT_EQ(changes_.size(), 3u) << "the first check's success puts rs1 up";
  EXPECT_EQ(changes_[2].rs, kRs1);
  EXPECT_TRUE(changes_[2].up);
  EXPECT_EQ(h->isUp("web", kRs2), false);
}

TEST_F(HealthSubsystemTest, FirstChecksSpreadOverTheInterval) {
  auto early = make(0);
  configure(*early, load(configText(kTcp)));
  sim_.advance(10ms);
  EXPECT_EQ(world_.probes, 2u) << "offset 0: at once";
  early.reset();
  running_.reset();
  world_.probes = 0;
  auto late = make(0x8000);
  configure(*late, load(configText(kTcp)));
  sim_.advance(999ms);
  EXPECT_EQ(world_.probes, 0u) << "half of a 2 s interval";
  sim_.advance(2ms);
  EXPECT_EQ(world_.probes, 2u);
}

TEST_F(HealthSubsystemTest, AReloadKeepsTheStateOfAnUnchangedCheckAndRestartsAChangedOne) {
  auto h = startWithRs1Down();
  ASSERT_EQ(changes_.size(), 1u);
  // The same checks, one more real server: rs1 stays down, nothing is reported for it.
  world_.servers[*Endpoint::parse("203.0.113.23:80", false)] = Server::kAlive;
  configure(*h, load(configText(kTcp, 3)));
  EXPECT_EQ(changes_.size(), 1u);
  EXPECT_EQ(h->isUp("web", kRs1), false);
  EXPECT_EQ(h->checked(), 3u);
  // A changed check starts from its initial state (up): rs1 is reported up, then found down.
  configure(*h, load(configText("type = \"tcp\"\ninterval = \"1s\"\ntimeout = \"1s\"\n"
                                "rise = 2\nfall = 1\n",
                                3)));
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_TRUE(changes_[1].up);
  sim_.advance(3s);
  ASSERT_EQ(changes_.size(), 3u);
  EXPECT_FALSE(changes_[2].up);
}

TEST_F(HealthSubsystemTest, ADroppedCheckPutsItsServerBackUp) {
  auto h = startWithRs1Down();
  ASSERT_EQ(changes_.size(), 1u);
  configure(*h, load(configText("type = \"none\"\n")));
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[1].rs, kRs1);
  EXPECT_TRUE(changes_[1].up);
  EXPECT_EQ(h->checked(), 0u);
  const size_t probes = world_.probes;
  sim_.advance(10s);
  EXPECT_EQ(world_.probes, probes) << "no check runs any more";
  EXPECT_EQ(world_.running, 0u);
}

TEST_F(HealthSubsystemTest, OneProbeAtATimePerServerAndTheNextAnIntervalAfter) {
  auto h = make();
  world_.servers[kRs1] = Server::kHung;
  world_.servers[kRs2] = Server::kHung;
  configure(*h, load(configText(kTcp)));
  sim_.advance(8s);  // probes at 0, 3 and 6 s (1 s timeout + 2 s interval)
  EXPECT_EQ(world_.probes, 6u);
  EXPECT_EQ(world_.most_running, 2u);
}

TEST_F(HealthSubsystemTest, StatusShowsEachServersHealthLastResultAndSince) {
  auto h = make();
  world_.servers[kRs2] = Server::kDead;
  configure(*h, load(configText(kTcp)));
  EXPECT_EQ(h->status()["health"]["real_servers"][0]["last"], nullptr) << "nothing checked yet";
  sim_.advance(30s);
  const nlohmann::json j = h->status();
  ASSERT_TRUE(j.contains("health")) << j.dump();
  EXPECT_EQ(j["health"]["checked"], 2);
  EXPECT_EQ(j["health"]["up"], 1);
  const auto& rs2 = j["health"]["real_servers"][0];  // the down ones first
  EXPECT_EQ(rs2["real_server"], "203.0.113.22:80");
  EXPECT_EQ(rs2["health"], "down");
  EXPECT_EQ(rs2["check"], "tcp");
  EXPECT_EQ(rs2["last"]["reason"], "connection refused");
  EXPECT_EQ(rs2["last"]["ok"], false);
  EXPECT_GT(rs2["since_ms"].get<uint64_t>(), 0u);
}

TEST_F(HealthSubsystemTest, StatusListsTheDownServersFirstAndAtMostABoundedNumber) {
  auto h = make();
  const int n = static_cast<int>(HealthSubsystem::kStatusServers) + 200;
  std::string text = configText(kFastTcp, 0);
  for (int i = 0; i < n; ++i) {
    const std::string rs = "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250);
    text += "[[virtual_server.real_server]]\naddress = \"" + rs + "\"\n";
    world_.servers[*Endpoint::parse(rs + ":80", false)] = Server::kAlive;
  }
  const Endpoint last = *Endpoint::parse("10.1.8.199:80", false);  // sorted last of all
  world_.servers[last] = Server::kDead;
  configure(*h, load(text));
  sim_.advance(3s);
  const nlohmann::json j = h->status()["health"];
  EXPECT_EQ(j["checked"], n);
  EXPECT_EQ(j["up"], n - 1);
  EXPECT_EQ(j["listed"], HealthSubsystem::kStatusServers);
  ASSERT_EQ(j["real_servers"].size(), HealthSubsystem::kStatusServers);
  EXPECT_EQ(j["real_servers"][0]["real_server"], "10.1.8.199:80") << "the down one first";
  EXPECT_EQ(j["real_servers"][0]["health"], "down");
  EXPECT_LT(j.dump().size(), 1024u * 1024u) << "fits the admin channel";
}

TEST_F(HealthSubsystemTest, TheHistoryIsBounded) {
  auto h = make();
  configure(*h, load(configText("type = \"tcp\"\ninterval = \"100ms\"\ntimeout = \"50ms\"\n"
                                "rise = 1\nfall = 1\n")));
  for (int i = 0; i < 300; ++i) {
    world_.servers[kRs1] = i % 2 == 0 ? Server::kDead : Server::kAlive;
    sim_.advance(110ms);
  }
  EXPECT_GT(changes_.size(), HealthSubsystem::kHistory);
  EXPECT_EQ(h->history().size(), HealthSubsystem::kHistory);
}

// What the election advertises as this director's Health: the share of checked servers up, with
// "none up" the floor the election knows, and 1000 again once nothing is checked.
TEST_F(HealthSubsystemTest, TheShareOfHealthyServersIsReportedForTheElection) {
  auto h = make();
  configure(*h, load(configText(kFastTcp)));
  sim_.advance(3s);
  EXPECT_TRUE(shares_.empty()) << "all up: 1000, as without checks";
  turn(kRs1, Server::kDead);
  turn(kRs2, Server::kDead);
  turn(kRs1, Server::kAlive);
  EXPECT_EQ(shares_, (std::vector<int>{500, election::kHealthNoRealServer, 500}));
  configure(*h, load(configText("type = \"none\"\n")));
  EXPECT_EQ(shares_.back(), 1000);
}

TEST_F(HealthSubsystemTest, ATypeWithoutACheckerIsOneWarningAndItsServersStayUp) {
  auto h = make();
  configure(*h, load(configText("type = \"smtp\"\n")));
  EXPECT_EQ(logger_.count(LogLevel::kWarning, "smtp checks are not built yet: 2 real server(s)"),
            1u);
  EXPECT_EQ(h->checked(), 0u);
  EXPECT_TRUE(changes_.empty());
  sim_.advance(10s);
  EXPECT_EQ(world_.probes, 0u);
}

TEST_F(HealthSubsystemTest, ShutdownStopsEveryProbe) {
  auto h = make();
  world_.servers[kRs1] = Server::kHung;
  configure(*h, load(configText(kTcp)));
  sim_.advance(100ms);
  EXPECT_EQ(world_.running, 1u);
  h->shutdown();
  EXPECT_EQ(world_.running, 0u);
  const size_t probes = world_.probes;
  sim_.advance(10s);
  EXPECT_EQ(world_.probes, probes);
}

// Slow start: a server back from down is handed weights that grow in steps to its configured
// one over slow_start; a server that never went down is not ramped.
TEST_F(HealthSubsystemTest, ARecoveredServerRampsUpOverSlowStart) {
  auto h = make();
  world_.servers[kRs1] = Server::kDead;
  configure(*h, load(configText(kFastTcp, 2, "slow_start = \"10s\"\n")));
  sim_.advance(3s);
  ASSERT_EQ(changes_.size(), 1u);
  EXPECT_FALSE(changes_[0].up);
  world_.servers[kRs1] = Server::kAlive;
  sim_.advance(2s);
  ASSERT_GE(changes_.size(), 2u);
  const loop::MonoTime back = changes_[1].at;
  EXPECT_TRUE(changes_[1].up);
  EXPECT_EQ(changes_[1].weight, 1) << "a tenth of 10 at first";
  sim_.advance(12s);
  std::vector<int> weights;
  for (size_t i = 1; i < changes_.size(); ++i) {
    ASSERT_EQ(changes_[i].rs, kRs1);
    ASSERT_TRUE(changes_[i].up);
    weights.push_back(changes_[i].weight.value_or(-1));
  }
  // -1: the configured weight (10) again, at the end of the ramp.
  EXPECT_EQ(weights, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, -1}));
  EXPECT_GE(changes_.back().at - back, 10s);
  EXPECT_LE(changes_.back().at - back, 11s);
  EXPECT_EQ(h->status()["health"]["real_servers"][0]["weight"], 10);
}

TEST_F(HealthSubsystemTest, AServerThatFailsDuringItsRampStopsRamping) {
  auto h = make();
  world_.servers[kRs1] = Server::kDead;
  configure(*h, load(configText(kFastTcp, 2, "slow_start = \"20s\"\n")));
  sim_.advance(3s);
  world_.servers[kRs1] = Server::kAlive;
  sim_.advance(5s);
  world_.servers[kRs1] = Server::kDead;
  sim_.advance(2s);
  ASSERT_FALSE(changes_.back().up);
  const size_t n = changes_.size();
  sim_.advance(30s);
  EXPECT_EQ(changes_.size(), n) << "no ramp step for a server that is down";
}

TEST_F(HealthSubsystemTest, AHealthyResultsAskedWeightIsHandedOnOnce) {
  auto h = make();
  configure(*h, load(configText(kTcp)));
  sim_.advance(5s);
  ASSERT_TRUE(changes_.empty());
  world_.asked_weight[kRs1] = 3;
  sim_.advance(5s);
  ASSERT_EQ(changes_.size(), 1u) << "a new weight, once however many checks repeat it";
  EXPECT_TRUE(changes_[0].up);
  EXPECT_EQ(changes_[0].weight, 3);
  EXPECT_EQ(logger_.count(LogLevel::kNotice,
                          "real server weight vs=web rs=203.0.113.21:80 check=tcp weight=3"),
            1u);
  EXPECT_EQ(h->status()["health"]["real_servers"][0]["weight"], 3);
  world_.asked_weight.erase(kRs1);
  sim_.advance(5s);
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[1].weight, std::nullopt) << "the configured weight again";
}

TEST_F(HealthSubsystemTest, NotifyRunsForEachServerAndServiceChangeWithItsEnvironment) {
  auto h = make();
  configure(*h, load(configText(kFastTcp, 2, "notify = [\"/usr/local/bin/page\", \"ops\"]\n")));
  sim_.advance(3s);
  EXPECT_TRUE(children_.starts.empty()) << "no event, no command";
  turn(kRs1, Server::kDead);
  turn(kRs2, Server::kDead);
  turn(kRs2, Server::kAlive);
  std::vector<std::string> events;
  for (const auto& st : children_.starts) {
    EXPECT_EQ(st.argv, (std::vector<std::string>{"/usr/local/bin/page", "ops"}));
    events.push_back(fakes::SimChildren::env(st, "TANDEM_EVENT") + " " +
                     fakes::SimChildren::env(st, "TANDEM_RS_ADDRESS"));
  }
  EXPECT_EQ(events, (std::vector<std::string>{"rs-down 203.0.113.21", "rs-down 203.0.113.22",
                                              "vs-down ", "rs-up 203.0.113.22", "vs-up "}));
  const auto& first = children_.starts[0];
  EXPECT_EQ(fakes::SimChildren::env(first, "TANDEM_VIRTUAL_SERVER"), "web");
  EXPECT_EQ(fakes::SimChildren::env(first, "TANDEM_RS_PORT"), "80");
  EXPECT_EQ(fakes::SimChildren::env(first, "TANDEM_REASON"), "connection refused");
  EXPECT_EQ(fakes::SimChildren::env(first, "TANDEM_NODE"), "lb1");
  EXPECT_EQ(
      logger_.count(LogLevel::kWarning, "virtual server down vs=web reason=\"no real server up\""),
      1u);
}

// A slow notify command: the events of one server never overlap, and of those that wait only
// the newest runs; another server's command does not wait for it.
TEST_F(HealthSubsystemTest, NotifyCommandsOfOneServerNeverRunConcurrently) {
  children_.runs_for = 3500ms;
  auto h = make();
  configure(*h, load(configText("type = \"tcp\"\ninterval = \"100ms\"\ntimeout = \"50ms\"\n"
                                "rise = 1\nfall = 1\n",
                                2, "notify = \"/usr/local/bin/page\"\nnotify_timeout = \"5s\"\n")));
  sim_.advance(1s);
  for (int i = 0; i < 6; ++i) {  // rs1 down, up, down, up, down, up: 105 ms apart
    world_.servers[kRs1] = i % 2 == 0 ? Server::kDead : Server::kAlive;
    sim_.advance(105ms);
  }
  world_.servers[kRs2] = Server::kDead;
  sim_.advance(10s);
  std::vector<std::string> rs1;
  loop::MonoTime previous{};
  for (const auto& st : children_.starts) {
    if (fakes::SimChildren::env(st, "TANDEM_RS_ADDRESS") != "203.0.113.21") continue;
    rs1.push_back(fakes::SimChildren::env(st, "TANDEM_EVENT"));
    if (rs1.size() > 1) {
      EXPECT_GE(st.at - previous, 3500ms) << "after the previous one ended";
    }
    previous = st.at;
  }
  EXPECT_EQ(rs1, (std::vector<std::string>{"rs-down", "rs-up"})) << "the first, then the newest";
  const auto rs2 = std::find_if(children_.starts.begin(), children_.starts.end(), [](auto& st) {
    return fakes::SimChildren::env(st, "TANDEM_RS_ADDRESS") == "203.0.113.22";
  });
  ASSERT_NE(rs2, children_.starts.end());
  EXPECT_LT(rs2->at - children_.starts[0].at, 1500ms) << "rs2's command did not wait for rs1's";
}

TEST_F(HealthSubsystemTest, ANotifyCommandThatTimesOutIsLogged) {
  children_.runs_for = 60s;
  auto h = make();
  configure(*h, load(configText(kFastTcp, 2,
                                "notify = \"/usr/local/bin/page\"\nnotify_timeout = \"2s\"\n")));
  world_.servers[kRs1] = Server::kDead;
  sim_.advance(5s);
  EXPECT_EQ(logger_.count(LogLevel::kWarning,
                          "notify command failed event=rs-down vs=web rs=203.0.113.21:80"),
            1u);
  EXPECT_EQ(children_.running, 0u);
}

}  // namespace
}  // namespace tandem::resources::health
