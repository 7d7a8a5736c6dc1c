// The route subsystem against a fake routing table, on simulated time: what it holds in each
// role and mode, with health and the hold-down, what a restart finds, a stop, a reload.
#include "route/route_subsystem.h"

#include <gtest/gtest.h>

#include "config/config_diff.h"
#include "fake_route_table.h"
#include "fakes/sim_dispatcher.h"

namespace tandem::resources::route {
namespace {

using election::Role;
using namespace std::chrono_literals;

const Endpoint kRs1 = *Endpoint::parse("203.0.113.11:80", false);
const Endpoint kRs2 = *Endpoint::parse("203.0.113.12:80", false);
constexpr const char* kRoute = "198.51.100.80/32";

class RouteSubsystemTest : public ::testing::Test {
 protected:
  RouteSubsystemTest() {
    kernel_.addInterface("tandem0", 7);
    config::Node a;
    a.name = "a";
    config::Node b;
    b.name = "b";
    cfg_.nodes = {a, b};
    config::VirtualServer vs;
    vs.name = "web";
    vs.address = *Endpoint::parse("198.51.100.80:80", false);
    vs.route = config::ServiceRoute{1};
    config::RealServer r1;
    r1.address = kRs1;
    config::RealServer r2;
    r2.address = kRs2;
    vs.real_servers = {r1, r2};
    cfg_.virtual_servers = {vs};
    cfg_.routes.table = 100;
    cfg_.routes.interface = "tandem0";
    cfg_.routes.metric = 20;
  }

  std::unique_ptr<RouteSubsystem> make() {
    RouteDeps deps{sim_,
                   [this]() -> Result<std::unique_ptr<RouteTable>> {
                     ++opens_;
                     return std::unique_ptr<RouteTable>(new fakes::RouteTableView(kernel_));
                   },
                   [this](LogLevel, const std::string& line) { log_.push_back(line); }};
    auto s = std::make_unique<RouteSubsystem>(std::move(deps), "a");
    s->configure(cfg_, nullptr, config::ReloadDiff{});
    EXPECT_TRUE(s->start());
    return s;
  }
  void reload(RouteSubsystem& s, const config::Config& next) {
    const config::Config running = cfg_;
    s.configure(next, &running, config::diffReload(running, next, "a"));
    cfg_ = next;
  }
  bool logged(const std::string& part) const {
    return std::any_of(log_.begin(), log_.end(),
                       [&](const std::string& l) { return l.find(part) != std::string::npos; });
  }

  fakes::SimDispatcher sim_;
  fakes::FakeRouteTable kernel_;
  config::Config cfg_;
  std::vector<std::string> log_;
  int opens_ = 0;
};

TEST_F(RouteSubsystemTest, ActiveBackupHoldsTheRouteOnlyWhileActiveAndDropsItFirstOnARelease) {
  auto s = make();
  EXPECT_EQ(s->status()["routes"]["services"][0]["reason"],
            "healthy (2 of 2 real servers up), but no role yet (joining the cluster)");
  s->onRole(Role::kBackup);
  EXPECT_FALSE(kernel_.has(kRoute));
  EXPECT_EQ(s->status()["routes"]["services"][0]["reason"],
            "healthy (2 of 2 real servers up), but not the ACTIVE (active/backup)");
  s->onRole(Role::kActive);
  ASSERT_EQ(kernel_.entries().size(), 1u);
  const rtnl::RouteEntry& e = kernel_.entries()[0];
  EXPECT_EQ(e.prefix.toString(), kRoute);
  EXPECT_EQ(e.table, 100u);
  EXPECT_EQ(e.protocol, 201);
  EXPECT_EQ(e.metric, 20u);
  EXPECT_EQ(e.ifindex, 7u);
  // The release starts: the route goes before the VIPs do (they go when RELEASING is reached).
  election::RoleChange release;
  release.from = Role::kActive;
  release.to = Role::kReleasing;
  s->onRoleChange(release);
  EXPECT_FALSE(kernel_.has(kRoute));
  s->onRole(Role::kBackup);
  EXPECT_FALSE(kernel_.has(kRoute));
  EXPECT_TRUE(logged("route withdrawn service=web route=198.51.100.80/32"));
}

TEST_F(RouteSubsystemTest, FewerThanMinHealthyWithdrawsAndARecoveryInjectsAgain) {
  cfg_.virtual_servers[0].route->min_healthy = 2;
  auto s = make();
  s->onRole(Role::kActive);
  ASSERT_TRUE(kernel_.has(kRoute));
  s->setHealth("web", kRs1, false);
  EXPECT_FALSE(kernel_.has(kRoute));
  auto st = s->status()["routes"]["services"][0];
  EXPECT_EQ(st["held"], false);
  EXPECT_EQ(st["reason"], "unhealthy: 1 of 2 real servers up, min_healthy 2");
  s->setHealth("web", kRs1, true);
  EXPECT_TRUE(kernel_.has(kRoute));
  s->setHealth("other", kRs1, false);  // another service's server: not this route's business
  EXPECT_TRUE(kernel_.has(kRoute));
}

TEST_F(RouteSubsystemTest, AFlappingServiceIsWithdrawnOnceAndBackAfterTheHoldDown) {
  cfg_.routes.hold_down = 10s;
  cfg_.virtual_servers[0].route->min_healthy = 2;
  auto s = make();
  s->onRole(Role::kActive);
  ASSERT_EQ(kernel_.adds, 1);
  for (int i = 0; i < 5; ++i) {
    s->setHealth("web", kRs2, false);
    sim_.advance(1s);
    s->setHealth("web", kRs2, true);
    sim_.advance(1s);
  }
  EXPECT_FALSE(kernel_.has(kRoute));
  EXPECT_EQ(kernel_.removes, 1);
  EXPECT_EQ(kernel_.adds, 1);
  sim_.advance(9s - 1ms);
  EXPECT_FALSE(kernel_.has(kRoute));
  sim_.advance(1ms);  // healthy for the whole hold-down since the last flap
  EXPECT_TRUE(kernel_.has(kRoute));
  EXPECT_EQ(kernel_.adds, 2);
  EXPECT_EQ(s->status()["routes"]["services"][0]["absorbed_flaps"], 4);
}

TEST_F(RouteSubsystemTest, ActiveActiveHoldsItInAnyServingRoleButStandbyAndFault) {
  cfg_.routes.mode = config::RouteMode::kActiveActive;
  auto s = make();
  EXPECT_FALSE(kernel_.has(kRoute));
  EXPECT_EQ(s->status()["routes"]["services"][0]["reason"],
            "healthy (2 of 2 real servers up), but no role yet (joining the cluster)");
  s->onRole(Role::kBackup);
  EXPECT_TRUE(kernel_.has(kRoute));
  s->onRole(Role::kStandby);
  EXPECT_FALSE(kernel_.has(kRoute));
  s->onRole(Role::kActive);
  EXPECT_TRUE(kernel_.has(kRoute));
  s->onRole(Role::kFault);
  EXPECT_FALSE(kernel_.has(kRoute));
}

TEST_F(RouteSubsystemTest, ARestartedActiveAdoptsItsRouteWithoutAWrite) {
  kernel_.put(rtnl::RouteRequest{*IpPrefix::parse(kRoute), 100, 201, 20, 7});
  auto s = make();
  sim_.advance(RouteSubsystem::kReconcileInterval * 2);  // no role yet: nothing decided
  EXPECT_TRUE(kernel_.has(kRoute));
  EXPECT_EQ(kernel_.removes, 0);
  s->onRole(Role::kActive);
  EXPECT_TRUE(kernel_.has(kRoute));
  EXPECT_EQ(kernel_.removes, 0);
  EXPECT_EQ(kernel_.adds, 0);
  EXPECT_TRUE(s->status()["routes"]["services"][0]["held"]);
}

// A killed ACTIVE that comes back and resumes passes through TAKING_OVER, where it is not yet
// entitled: its route stays untouched until ACTIVE adopts it.
TEST_F(RouteSubsystemTest, ARestartedActiveResumingThroughTakingOverNeverDropsItsRoute) {
  kernel_.put(rtnl::RouteRequest{*IpPrefix::parse(kRoute), 100, 201, 20, 7});
  auto s = make();
  s->onRole(Role::kTakingOver);
  s->setHealth("web", kRs1, true);  // a check result meanwhile decides nothing either
  sim_.advance(RouteSubsystem::kReconcileInterval);
  EXPECT_TRUE(kernel_.has(kRoute));
  s->onRole(Role::kActive);
  EXPECT_TRUE(kernel_.has(kRoute));
  EXPECT_EQ(kernel_.removes, 0);
  EXPECT_EQ(kernel_.adds, 0);
  EXPECT_TRUE(logged("route adopted service=web"));
}

TEST_F(RouteSubsystemTest, ARestartedBackupWithdrawsWhatItLeftAndOrphansOfItsProtocolGo) {
  kernel_.put(rtnl::RouteRequest{*IpPrefix::parse(kRoute), 100, 201, 20, 7});
  kernel_.put(rtnl::RouteRequest{*IpPrefix::parse("198.51.100.99/32"), 100, 201, 20, 7});
  kernel_.put(rtnl::RouteRequest{*IpPrefix::parse("198.51.100.98/32"), 100, 12, 0, 7});  // BIRD's
  auto s = make();
  s->onRole(Role::kBackup);
  EXPECT_FALSE(kernel_.has(kRoute));
  EXPECT_FALSE(kernel_.has("198.51.100.99/32"));
  EXPECT_TRUE(kernel_.has("198.51.100.98/32"));  // another protocol's: not tandem's to touch
  EXPECT_TRUE(logged("route orphan withdrawn route=198.51.100.99/32"));
}

TEST_F(RouteSubsystemTest, OnlyHostRoutesAreEverSweptAsOrphans) {
  kernel_.put(rtnl::RouteRequest{*IpPrefix::parse("198.51.100.0/24"), 100, 201, 0, 7});
  auto s = make();
  s->onRole(Role::kActive);
  sim_.advance(RouteSubsystem::kReconcileInterval);
  EXPECT_TRUE(kernel_.has("198.51.100.0/24"));
  EXPECT_TRUE(kernel_.has(kRoute));
}

// The kernel puts an IPv6 blackhole on lo: read back with index 1, it is still the route
// wanted, neither put back as missing nor swept as an orphan.
TEST_F(RouteSubsystemTest, AnIpv6BlackholeIsHeldSteadilyThroughTheReconciles) {
  cfg_.routes.interface.clear();
  cfg_.routes.metric = 0;
  cfg_.virtual_servers[0].address = *Endpoint::parse("[2001:db8::80]:80", false);
  auto s = make();
  s->onRole(Role::kActive);
  ASSERT_TRUE(kernel_.has("2001:db8::80/128"));
  ASSERT_EQ(kernel_.entries()[0].ifindex, 1u);
  sim_.advance(RouteSubsystem::kReconcileInterval * 3);
  EXPECT_TRUE(kernel_.has("2001:db8::80/128"));
  EXPECT_EQ(kernel_.adds, 1);
  EXPECT_EQ(kernel_.removes, 0);
  EXPECT_EQ(s->status()["routes"]["services"][0]["repairs"], 0);
}

TEST_F(RouteSubsystemTest, AReloadToAnotherOwnedNameOrToNoneDeletesTheOldDevice) {
  cfg_.routes.interface = "rhi0";
  cfg_.routes.own_interface = true;
  auto s = make();
  s->onRole(Role::kActive);
  ASSERT_TRUE(kernel_.owns("rhi0"));
  config::Config next = cfg_;
  next.routes.interface = "rhi1";
  reload(*s, next);
  EXPECT_FALSE(kernel_.owns("rhi0"));
  EXPECT_FALSE(kernel_.interfaceIndex("rhi0"));
  ASSERT_EQ(kernel_.entries().size(), 1u);
  EXPECT_EQ(kernel_.entries()[0].ifindex, *kernel_.interfaceIndex("rhi1"));
  next.routes.interface = "tandem0";
  next.routes.own_interface = false;
  reload(*s, next);
  EXPECT_FALSE(kernel_.owns("rhi1"));
  EXPECT_FALSE(kernel_.interfaceIndex("rhi1"));
  ASSERT_EQ(kernel_.entries().size(), 1u);
  EXPECT_EQ(kernel_.entries()[0].ifindex, 7u);
}

TEST_F(RouteSubsystemTest, AStopWithdrawsEveryRoute) {
  auto s = make();
  s->onRole(Role::kActive);
  ASSERT_TRUE(kernel_.has(kRoute));
  s->shutdown();
  EXPECT_TRUE(kernel_.entries().empty());
  EXPECT_EQ(s->status()["routes"]["services"][0]["reason"], "tandemd stops");
}

TEST_F(RouteSubsystemTest, ARouteDeletedBehindItsBackIsPutBackAndSaysSo) {
  auto s = make();
  s->onRole(Role::kActive);
  kernel_.drop(kRoute);
  sim_.advance(RouteSubsystem::kReconcileInterval);
  EXPECT_TRUE(kernel_.has(kRoute));
  EXPECT_TRUE(logged("route missing, put back service=web"));
}

TEST_F(RouteSubsystemTest, AMissingInterfaceHoldsNothingAndNamesTheFix) {
  cfg_.routes.interface = "nosuch0";
  auto s = make();
  s->onRole(Role::kActive);
  EXPECT_TRUE(kernel_.entries().empty());
  EXPECT_EQ(s->status()["routes"]["error"], "interface nosuch0 does not exist");
  EXPECT_TRUE(
      logged("action=\"create it (ip link add nosuch0 type dummy); it is looked for "
             "again every few seconds"));
  // Created later: the reconcile finds it and the route is held, without a reload.
  kernel_.addInterface("nosuch0", 9);
  sim_.advance(RouteSubsystem::kReconcileInterval);
  ASSERT_EQ(kernel_.entries().size(), 1u);
  EXPECT_EQ(kernel_.entries()[0].ifindex, 9u);
  EXPECT_FALSE(s->status()["routes"].contains("error"));
  EXPECT_TRUE(logged("route interface usable again interface=nosuch0"));
}

TEST_F(RouteSubsystemTest, AnOwnedInterfaceDeletedBehindItsBackIsCreatedAgainWithItsRoute) {
  cfg_.routes.interface = "rhi0";
  cfg_.routes.own_interface = true;
  auto s = make();
  s->onRole(Role::kActive);
  const uint32_t first = *kernel_.interfaceIndex("rhi0");
  kernel_.deleteInterface("rhi0");
  ASSERT_TRUE(kernel_.entries().empty());
  sim_.advance(RouteSubsystem::kReconcileInterval);
  ASSERT_EQ(kernel_.entries().size(), 1u);
  EXPECT_NE(kernel_.entries()[0].ifindex, first);
  EXPECT_EQ(kernel_.entries()[0].ifindex, *kernel_.interfaceIndex("rhi0"));
  EXPECT_EQ(s->status()["routes"]["services"][0]["repairs"], 1);
}

TEST_F(RouteSubsystemTest, AnOwnedInterfaceIsCreatedByTandemdAndItsRoutesDieWithIt) {
  cfg_.routes.interface = "rhi0";
  cfg_.routes.own_interface = true;
  auto s = make();
  s->onRole(Role::kActive);
  ASSERT_TRUE(kernel_.owns("rhi0"));
  ASSERT_EQ(kernel_.entries().size(), 1u);
  EXPECT_EQ(kernel_.entries()[0].ifindex, *kernel_.interfaceIndex("rhi0"));
  EXPECT_EQ(s->status()["routes"]["own_interface"], true);
  // A kill -9: no shutdown() runs, and the kernel takes the device and its route away.
  kernel_.ownerExits();
  EXPECT_TRUE(kernel_.entries().empty());
}

TEST_F(RouteSubsystemTest, AnOwnedInterfaceNeverTakesOverAnExistingOneOfThatName) {
  cfg_.routes.own_interface = true;  // "tandem0" exists: another program's
  auto s = make();
  s->onRole(Role::kActive);
  EXPECT_TRUE(kernel_.entries().empty());
  EXPECT_FALSE(kernel_.owns("tandem0"));
  EXPECT_EQ(s->status()["routes"]["error"],
            "interface tandem0 exists already and is not tandemd's own device");
  EXPECT_TRUE(logged("action=\"delete the interface of that name or name another one"));
}

std::string scrapeOf(const RouteSubsystem& s,
                     metrics::Format format = metrics::Format::kOpenMetrics) {
  metrics::Exposition out(format);
  s.writeMetrics(out);
  return out.finish();
}

TEST_F(RouteSubsystemTest, TheMetricsSayHeldErrorWithdrawalsFlapsAndRepairsPerService) {
  cfg_.routes.hold_down = 10s;
  auto s = make();
  s->onRole(Role::kActive);
  kernel_.drop(kRoute);
  sim_.advance(RouteSubsystem::kReconcileInterval);  // a repair
  s->setHealth("web", kRs1, false);
  s->setHealth("web", kRs2, false);  // a withdrawal
  s->setHealth("web", kRs1, true);
  s->setHealth("web", kRs1, false);  // a flap absorbed by the hold-down
  EXPECT_EQ(scrapeOf(*s),
            "# HELP tandem_route_held 1 while this director holds the service's host route in "
            "the kernel\n"
            "# TYPE tandem_route_held gauge\n"
            "tandem_route_held{vs=\"web\",route=\"198.51.100.80/32\"} 0\n"
            "# HELP tandem_route_error 1 while the route cannot be written as decided (its last "
            "change failed, or the route interface is unusable)\n"
            "# TYPE tandem_route_error gauge\n"
            "tandem_route_error{vs=\"web\",route=\"198.51.100.80/32\"} 0\n"
            "# HELP tandem_route_withdrawals Withdrawals of the route because the service was "
            "unhealthy\n"
            "# TYPE tandem_route_withdrawals counter\n"
            "tandem_route_withdrawals_total{vs=\"web\",route=\"198.51.100.80/32\"} 1\n"
            "# HELP tandem_route_absorbed_flaps Failures of the service absorbed by the "
            "hold-down, no withdrawal each\n"
            "# TYPE tandem_route_absorbed_flaps counter\n"
            "tandem_route_absorbed_flaps_total{vs=\"web\",route=\"198.51.100.80/32\"} 1\n"
            "# HELP tandem_route_repairs Times the route was put back after a removal behind "
            "tandem's back\n"
            "# TYPE tandem_route_repairs counter\n"
            "tandem_route_repairs_total{vs=\"web\",route=\"198.51.100.80/32\"} 1\n"
            "# EOF\n");
  // The counters survive a reload that keeps the service.
  config::Config next = cfg_;
  next.routes.metric = 30;
  reload(*s, next);
  EXPECT_NE(
      scrapeOf(*s).find("tandem_route_repairs_total{vs=\"web\",route=\"198.51.100.80/32\"} 1\n"),
      std::string::npos);
  // Prometheus text names the counter's family with _total.
  EXPECT_NE(scrapeOf(*s, metrics::Format::kPrometheusText)
                .find("# TYPE tandem_route_repairs_total counter\n"),
            std::string::npos);
}

TEST_F(RouteSubsystemTest, AnUnusableInterfaceIsAnErrorOfEveryRouteAndNoServiceNoSeries) {
  cfg_.routes.interface = "nosuch0";
  auto s = make();
  s->onRole(Role::kActive);
  EXPECT_NE(scrapeOf(*s).find("tandem_route_error{vs=\"web\",route=\"198.51.100.80/32\"} 1\n"),
            std::string::npos)
      << scrapeOf(*s);
  cfg_.virtual_servers[0].route.reset();
  auto none = make();
  EXPECT_EQ(scrapeOf(*none), "# EOF\n");
}

TEST_F(RouteSubsystemTest, AFailedAddIsRetriedByTheReconcile) {
  kernel_.fail_add = Error{ErrorCode::kIo, "cannot add route: Network is down"};
  auto s = make();
  s->onRole(Role::kActive);
  EXPECT_FALSE(kernel_.has(kRoute));
  EXPECT_EQ(s->status()["routes"]["services"][0]["error"], "cannot add route: Network is down");
  sim_.advance(RouteSubsystem::kReconcileInterval);
  EXPECT_TRUE(kernel_.has(kRoute));
  EXPECT_FALSE(s->status()["routes"]["services"][0].contains("error"));
}

TEST_F(RouteSubsystemTest,
       AReloadThatMovesTheRouteWithdrawsTheOldOneAndAReloadOfNothingWritesNothing) {
  auto s = make();
  s->onRole(Role::kActive);
  const int adds = kernel_.adds;
  reload(*s, cfg_);
  EXPECT_EQ(kernel_.adds, adds);
  EXPECT_EQ(kernel_.removes, 0);
  config::Config next = cfg_;
  next.routes.table = 200;
  next.nodes[0].route_metric = 50;  // this director's own metric
  reload(*s, next);
  ASSERT_EQ(kernel_.entries().size(), 1u);
  EXPECT_EQ(kernel_.entries()[0].table, 200u);
  EXPECT_EQ(kernel_.entries()[0].metric, 50u);
  next.virtual_servers[0].route.reset();
  reload(*s, next);
  EXPECT_TRUE(kernel_.entries().empty());
  EXPECT_TRUE(s->status().is_null());
}

TEST_F(RouteSubsystemTest, AReloadToAnotherTableOrMetricAddsTheNewRouteBeforeWithdrawingTheOld) {
  // Make before break: the routing daemon never sees the address without a route.
  auto s = make();
  s->onRole(Role::kActive);
  kernel_.writes.clear();
  config::Config next = cfg_;
  next.nodes[0].route_metric = 50;
  reload(*s, next);
  EXPECT_EQ(kernel_.writes, (std::vector<std::string>{"+198.51.100.80/32 table 100 metric 50",
                                                      "-198.51.100.80/32 table 100 metric 20"}));
  kernel_.writes.clear();
  next.routes.table = 200;
  reload(*s, next);
  EXPECT_EQ(kernel_.writes, (std::vector<std::string>{"+198.51.100.80/32 table 200 metric 50",
                                                      "-198.51.100.80/32 table 100 metric 50"}));
  ASSERT_EQ(kernel_.entries().size(), 1u);
}

TEST_F(RouteSubsystemTest, AReloadToAnotherInterfaceAtTheSameMetricReplacesTheRoute) {
  // The same table and metric is the same route to the kernel: a second add would be refused
  // as already there and taken for adopted, so the old one goes first, and the new one holds.
  kernel_.addInterface("tandem1", 8);
  auto s = make();
  s->onRole(Role::kActive);
  kernel_.writes.clear();
  config::Config next = cfg_;
  next.routes.interface = "tandem1";
  reload(*s, next);
  EXPECT_EQ(kernel_.writes, (std::vector<std::string>{"-198.51.100.80/32 table 100 metric 20",
                                                      "+198.51.100.80/32 table 100 metric 20"}));
  ASSERT_EQ(kernel_.entries().size(), 1u);
  EXPECT_EQ(kernel_.entries()[0].ifindex, 8u);
  sim_.advance(RouteSubsystem::kReconcileInterval * 2);
  EXPECT_EQ(s->status()["routes"]["services"][0]["held"], true);
  EXPECT_FALSE(logged("put back"));
}

TEST_F(RouteSubsystemTest, NoRoutedServiceOpensNoTable) {
  cfg_.virtual_servers[0].route.reset();
  auto s = make();
  s->onRole(Role::kActive);
  sim_.advance(RouteSubsystem::kReconcileInterval * 3);
  EXPECT_EQ(opens_, 0);
  EXPECT_TRUE(s->status().is_null());
}

}  // namespace
}  // namespace tandem::resources::route
