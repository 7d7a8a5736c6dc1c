// The IPVS subsystem: the table kept from each loaded config on every director, nothing opened
// without [[virtual_server]], a kernel without IPVS logged once and retried, drift repaired on
// the next monitor pass, and the ipvs answer. Simulated time and a fake kernel table.
#include "ipvs/ipvs_subsystem.h"

#include <gtest/gtest.h>
#include <netinet/in.h>

#include <algorithm>
#include <memory>
#include <string>

#include "config/config_loader.h"
#include "fakes/fake_file_system.h"
#include "fakes/fake_logger.h"
#include "fakes/fake_notifier.h"
#include "fakes/sim_dispatcher.h"
#include "resources/fake_ipvs_kernel.h"

namespace tandem::resources::ipvs {
namespace {

using namespace std::chrono_literals;
using fakes::FakeIpvsKernel;
using platform::LogLevel;

constexpr char kPath[] = "/etc/tandem/tandem.conf";
constexpr char kKeyPath[] = "/etc/tandem/authkey";

constexpr char kHead[] =
    "[cluster]\nname = \"t\"\n[[cluster.key]]\nid = 1\nfile = \"authkey\"\n"
    "[[node]]\nname = \"a\"\ninterfaces = [\"eth0\"]\n"
    "[[vip]]\naddress = \"198.51.100.50/24\"\ninterface = \"eth0\"\n"
    "[ipvs]\nmonitor_interval = \"2s\"\n";

std::string withWeb(int rs2_weight = 1) {
  return std::string(kHead) +
         "[[virtual_server]]\nname = \"web\"\naddress = \"198.51.100.50:80\"\n"
         "scheduler = \"rr\"\n"
         "[[virtual_server.real_server]]\naddress = \"203.0.113.21\"\n"
         "[[virtual_server.real_server]]\naddress = \"203.0.113.22\"\nweight = " +
         std::to_string(rs2_weight) + "\n";
}

config::Config load(const std::string& text) {
  fakes::FakeFileSystem files;
  files.write(kKeyPath, std::string(32, 'k'), 0600);
  auto r = config::loadConfigText(text, kPath, files);
  EXPECT_TRUE(r.ok()) << r.diagnostics.formatAll();
  return *r.config;
}

IpAddress ip(const char* text) { return *IpAddress::parse(text); }

const ServiceKey kWeb{Family::kInet, IPPROTO_TCP, ip("198.51.100.50"), 80, 0};
const DestKey kRs1{ip("203.0.113.21"), 80};
const DestKey kRs2{ip("203.0.113.22"), 80};

using SharedKernel = fakes::KernelView;

class IpvsSubsystemTest : public ::testing::Test {
 protected:
  OpenIpvsKernel opener() {
    return [this]() -> Result<std::unique_ptr<Kernel>> {
      ++opens_;
      if (!ipvs_loaded_) {
        return fail(ErrorCode::kUnavailable,
                    "this kernel has no IPVS (generic netlink family \"IPVS\" not found); load "
                    "it with `modprobe ip_vs`");
      }
      return std::unique_ptr<Kernel>(std::make_unique<SharedKernel>(kernel_));
    };
  }

  IpvsDeps deps(OpenOwnedStore open_owned = nullptr) {
    return IpvsDeps{sim_, opener(), std::move(open_owned), logger_.sink()};
  }

  fakes::SimDispatcher sim_;
  fakes::FakeLogger logger_;
  FakeIpvsKernel kernel_;
  int opens_ = 0;
  bool ipvs_loaded_ = true;
};

// Configures m as the director does: at start, then each reload with its diff; then lets the
// loop run what that made due at once (the fake kernel answers at once; the reconciler's steps
// after a dump still run from the loop).
class Subsystem final {
 public:
  explicit Subsystem(IpvsDeps deps)
      : sim_(dynamic_cast<fakes::SimDispatcher&>(deps.dispatcher)), s_(std::move(deps), "a") {}
  void configure(const config::Config& next) {
    const config::ReloadDiff diff =
        running_ ? config::diffReload(*running_, next, "a") : config::ReloadDiff{};
    s_.configure(next, running_ ? &*running_ : nullptr, diff);
    running_ = next;
    sim_.advance(0ms);
  }
  bool running() const { return s_.running(); }
  Result<nlohmann::json> show() { return s_.show(); }

 private:
  fakes::SimDispatcher& sim_;
  IpvsSubsystem s_;
  std::optional<config::Config> running_;
};

TEST_F(IpvsSubsystemTest, AConfigWithoutVirtualServersOpensNothing) {
  Subsystem m(deps());
  m.configure(load(kHead));
  sim_.advance(10s);
  EXPECT_EQ(opens_, 0);
  EXPECT_FALSE(m.running());
  EXPECT_EQ(sim_.armedTimers(), 0u);
  auto shown = m.show();
  ASSERT_FALSE(shown.has_value());
  EXPECT_EQ(shown.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(shown.error().message.find("no [[virtual_server]]"), std::string::npos)
      << shown.error().message;
}

TEST_F(IpvsSubsystemTest, KeepsTheConfiguredTableAtOnce) {
  Subsystem m(deps());
  m.configure(load(withWeb()));
  EXPECT_EQ(opens_, 1);
  ASSERT_TRUE(m.running());
  ASSERT_TRUE(kernel_.hasService(kWeb));
  EXPECT_EQ(kernel_.dest(kWeb, kRs1)->forward, Forward::kMasq);
  EXPECT_EQ(kernel_.dest(kWeb, kRs2)->weight, 1);
  EXPECT_EQ(logger_.count(LogLevel::kNotice, "whatever its role services=1"), 1u);
}

// The owned services live in a store the shell opens in [daemon] state_dir; in memory here.
class MemoryOwned final : public OwnedStore {
 public:
  explicit MemoryOwned(std::optional<std::string>& text) : text_(text) {}
  const std::string& path() const override { return path_; }
  Result<std::optional<std::string>> read() override { return text_; }
  Result<void> write(const std::string& t) override {
    text_ = t;
    return {};
  }

 private:
  std::optional<std::string>& text_;
  std::string path_ = "/var/lib/tandem/ipvs-owned";
};

TEST_F(IpvsSubsystemTest, AServiceDroppedWhileTandemdWasDownIsRemovedAfterTheRestart) {
  std::optional<std::string> file;
  std::string dir;
  auto open_owned = [&](const std::string& state_dir) {
    dir = state_dir;
    return std::make_unique<MemoryOwned>(file);
  };
  {
    Subsystem before(deps(open_owned));
    before.configure(load(withWeb()));
    ASSERT_TRUE(kernel_.hasService(kWeb));
  }
  EXPECT_EQ(dir, "/var/lib/tandem");
  ASSERT_TRUE(file.has_value());
  EXPECT_NE(file->find("tcp 198.51.100.50:80"), std::string::npos) << *file;
  // Restarted with web gone from the config (another service keeps IPVS open).
  const std::string other = std::string(kHead) +
                            "[[virtual_server]]\nname = \"dns\"\naddress = \"198.51.100.50:53\"\n"
                            "protocol = \"udp\"\n"
                            "[[virtual_server.real_server]]\naddress = \"203.0.113.21\"\n";
  Subsystem after(deps(open_owned));
  after.configure(load(other));
  EXPECT_FALSE(kernel_.hasService(kWeb));
  EXPECT_EQ(file->find("tcp 198.51.100.50:80"), std::string::npos) << *file;
}

TEST_F(IpvsSubsystemTest, WithoutIpvsItLogsOnceRunsOnAndRetriesEveryMonitorInterval) {
  ipvs_loaded_ = false;
  Subsystem m(deps());
  m.configure(load(withWeb()));
  EXPECT_FALSE(m.running());
  EXPECT_EQ(opens_, 1);
  sim_.advance(1999ms);
  EXPECT_EQ(opens_, 1);
  sim_.advance(1ms);
  EXPECT_EQ(opens_, 2);
  sim_.advance(4s);
  EXPECT_EQ(opens_, 4);
  EXPECT_EQ(logger_.count(LogLevel::kError, "IPVS is not available: this kernel has no IPVS"), 1u);
  EXPECT_EQ(logger_.count(LogLevel::kError, "modprobe ip_vs"), 1u);
  auto shown = m.show();
  ASSERT_FALSE(shown.has_value());
  EXPECT_EQ(shown.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(shown.error().message.find("IPVS is not available on this director"),
            std::string::npos);

  ipvs_loaded_ = true;  // someone ran modprobe ip_vs
  sim_.advance(2s);
  EXPECT_TRUE(m.running());
  EXPECT_TRUE(kernel_.hasService(kWeb));
  EXPECT_EQ(logger_.count(LogLevel::kNotice, "IPVS is available now"), 1u);
  const int opens = opens_;
  sim_.advance(10s);
  EXPECT_EQ(opens_, opens) << "no more opening once the table is kept";
}

TEST_F(IpvsSubsystemTest, ADeletedServiceIsRestoredOnTheNextMonitorPassAndLogged) {
  Subsystem m(deps());
  m.configure(load(withWeb()));
  ASSERT_TRUE(kernel_.hasService(kWeb));
  // ipvsadm -D -t 198.51.100.50:80
  Op del;
  del.kind = Op::Kind::kDelService;
  del.service.key = kWeb;
  ASSERT_TRUE(kernel_.applyDirect(del).has_value());
  sim_.advance(1999ms);
  EXPECT_FALSE(kernel_.hasService(kWeb));
  sim_.advance(1ms);
  EXPECT_TRUE(kernel_.hasService(kWeb));
  EXPECT_TRUE(kernel_.dest(kWeb, kRs2).has_value());
  EXPECT_EQ(logger_.count(LogLevel::kWarning, "deleted behind tandem's back"), 1u);
}

TEST_F(IpvsSubsystemTest, AReloadSettingAWeightToZeroEditsOnlyThatServer) {
  Subsystem m(deps());
  m.configure(load(withWeb()));
  const size_t before = kernel_.applied().size();
  m.configure(load(withWeb(0)));
  ASSERT_EQ(kernel_.applied().size(), before + 1);
  EXPECT_EQ(kernel_.applied().back().kind, Op::Kind::kEditDest);
  EXPECT_EQ(kernel_.dest(kWeb, kRs2)->weight, 0);
  EXPECT_EQ(kernel_.dest(kWeb, kRs1)->weight, 1);
}

TEST_F(IpvsSubsystemTest, AReloadDroppingEveryServiceRemovesTandemsOwn) {
  Subsystem m(deps());
  m.configure(load(withWeb()));
  ASSERT_TRUE(kernel_.hasService(kWeb));
  m.configure(load(kHead));
  EXPECT_FALSE(kernel_.hasService(kWeb));
}

TEST_F(IpvsSubsystemTest, ShowListsServicesWithNamesHealthAndCounters) {
  Subsystem m(deps());
  m.configure(load(withWeb()));
  // A service somebody else added (manage = "owned" leaves it alone).
  Op foreign;
  foreign.kind = Op::Kind::kAddService;
  foreign.service.key = ServiceKey{Family::kInet, IPPROTO_UDP, ip("198.51.100.53"), 53, 0};
  foreign.service.scheduler = "wrr";
  ASSERT_TRUE(kernel_.applyDirect(foreign).has_value());
  sim_.advance(2s);  // show answers from the table the last pass read: the monitor pass's
  auto shown = m.show();
  ASSERT_TRUE(shown.has_value()) << shown.error().message;
  const auto& j = *shown;
  EXPECT_EQ(j["in_sync"], true);
  EXPECT_EQ(j["monitor_interval_ms"], 2000);
  ASSERT_EQ(j["services"].size(), 2u);
  // The answer comes from the table the last pass left, in key order: tcp before udp.
  const auto& udp = j["services"][1];
  EXPECT_EQ(udp["key"], "udp 198.51.100.53:53");
  EXPECT_TRUE(udp["name"].is_null());
  EXPECT_EQ(udp["managed"], false);
  const auto& web = j["services"][0];
  EXPECT_EQ(web["name"], "web");
  EXPECT_EQ(web["key"], "tcp 198.51.100.50:80");
  EXPECT_EQ(web["protocol"], "tcp");
  EXPECT_EQ(web["address"], "198.51.100.50");
  EXPECT_EQ(web["port"], 80);
  EXPECT_TRUE(web["fwmark"].is_null());
  EXPECT_EQ(web["scheduler"], "rr");
  EXPECT_EQ(web["flags"], nlohmann::json::array());
  EXPECT_EQ(web["managed"], true);
  ASSERT_EQ(web["destinations"].size(), 2u);
  const auto& rs2 = web["destinations"][1];
  EXPECT_EQ(rs2["address"], "203.0.113.22");
  EXPECT_EQ(rs2["port"], 80);
  EXPECT_EQ(rs2["forward"], "nat");
  EXPECT_EQ(rs2["weight"], 1);
  EXPECT_EQ(rs2["health"], "up");
  for (const char* k : {"active_conns", "inactive_conns", "persistent_conns", "conns", "cps",
                        "in_pps", "out_pps", "in_bps", "out_bps"}) {
    EXPECT_TRUE(rs2.contains(k)) << k;
  }
}

// A read command starts no kernel work (issue 13): however often `tandem ipvs show` asks, the
// kernel sees only the monitor's dumps.
TEST_F(IpvsSubsystemTest, ShowNeverAsksTheKernel) {
  Subsystem m(deps());
  m.configure(load(withWeb()));
  sim_.advance(2s);
  const size_t dumps = kernel_.dumps();
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(m.show().has_value());
  EXPECT_EQ(kernel_.dumps(), dumps);
  sim_.advance(2s);  // the next monitor pass: one more dump, whatever was asked meanwhile
  EXPECT_GT(kernel_.dumps(), dumps) << "the counter counts";
}

// What the heartbeats carry for a sync-aware failback, and the sync status's templates: the
// counts of the last dump, never asked of the kernel when read.
TEST_F(IpvsSubsystemTest, CountsTheConnectionsAndTemplatesOfTheLastDump) {
  IpvsSubsystem s(deps(), "a");
  EXPECT_EQ(s.connections(), 0u) << "nothing dumped yet";
  s.configure(load(withWeb()), nullptr, config::ReloadDiff{});
  sim_.advance(0ms);
  kernel_.setConnections(kWeb, kRs1, 120, 30, 7);
  kernel_.setConnections(kWeb, kRs2, 5, 1, 2);
  EXPECT_EQ(s.connections(), 0u) << "the first pass's dump had none";
  const size_t dumps = kernel_.dumps();
  sim_.advance(2s);  // the monitor pass
  ASSERT_GT(kernel_.dumps(), dumps);
  EXPECT_EQ(s.connections(), 156u) << "active and inactive, templates apart";
  EXPECT_EQ(s.templates(), 9u);
}

TEST_F(IpvsSubsystemTest, ARealServerShowsTheHealthItsCheckReported) {
  IpvsSubsystem s(deps(), "a");
  const config::Config cfg = load(withWeb() + "[virtual_server.check]\ntype = \"tcp\"\n");
  s.configure(cfg, nullptr, config::ReloadDiff{});
  sim_.advance(0ms);
  auto health_of = [&](size_t i) {
    auto shown = s.show();
    EXPECT_TRUE(shown.has_value()) << shown.error().message;
    return shown ? (*shown)["services"][0]["destinations"][i]["health"] : nlohmann::json();
  };
  EXPECT_EQ(health_of(1), "up") << "before its first change: up, as it takes traffic";
  s.setHealth("web", cfg.virtual_servers[0].real_servers[1].address, false);
  sim_.advance(0ms);
  EXPECT_EQ(health_of(1), "down");
  EXPECT_EQ(kernel_.dest(kWeb, kRs2)->weight, 0) << "quiescent";
  EXPECT_EQ(health_of(0), "up");
}

TEST_F(IpvsSubsystemTest, ADumpThatFailsIsAnErrorNamingTheTable) {
  Subsystem m(deps());
  m.configure(load(withWeb()));
  kernel_.failDumps(1);
  sim_.advance(2s);  // the monitor pass cannot read the table
  auto shown = m.show();
  ASSERT_FALSE(shown.has_value());
  EXPECT_NE(shown.error().message.find("cannot read the IPVS table"), std::string::npos);
}

}  // namespace
}  // namespace tandem::resources::ipvs
