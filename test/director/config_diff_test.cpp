// The reload diff: pure, config in, refusals and changes out.
#include "config/config_diff.h"

#include <gtest/gtest.h>

namespace tandem::config {
namespace {

using namespace std::chrono_literals;

Config base() {
  Config c;
  c.source = "/etc/tandem/tandem.conf";
  c.cluster.name = "t";
  c.cluster.keys = {AuthKey{1, "authkey", ""}};
  Node a;
  a.name = "a";
  a.priority = 200;
  a.interfaces = {"eth0"};
  Node b = a;
  b.name = "b";
  b.priority = 100;
  c.nodes = {a, b};
  Vip v;
  v.address = *IpPrefix::parse("198.51.100.50/32");
  v.interface = "eth0";
  c.vips = {v};
  return c;
}

TEST(ReloadDiff, TheSameConfigChangesNothing) {
  ReloadDiff d = diffReload(base(), base(), "a");
  EXPECT_TRUE(d.accepted());
  EXPECT_TRUE(d.changes.empty());
  EXPECT_EQ(d.changedSections(), "nothing");
}

TEST(ReloadDiff, EachKeyThatCannotChangeLiveIsRefusedWithBothValues) {
  Config next = base();
  next.cluster.group = "other";
  next.cluster.name = "u";
  next.cluster.heartbeat_port = 6000;
  next.daemon.state_dir = "/srv/tandem";
  next.control.ipc_name = "tandem2";
  ReloadDiff d = diffReload(base(), next, "a");
  ASSERT_FALSE(d.accepted());
  std::vector<std::string> keys;
  for (const auto& r : d.refused) keys.push_back(r.key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"cluster.name", "cluster.group", "cluster.heartbeat_port",
                                      "control.ipc_name", "daemon.state_dir"}));
  EXPECT_EQ(d.refused[1].format().rfind("cluster.group cannot change while tandemd runs: "
                                        "running \"tandem\", new \"other\" (",
                                        0),
            0u)
      << d.refused[1].format();
}

TEST(ReloadDiff, AFileWithoutThisNodeIsRefused) {
  Config next = base();
  next.nodes.erase(next.nodes.begin());
  ReloadDiff d = diffReload(base(), next, "a");
  ASSERT_EQ(d.refused.size(), 1u);
  EXPECT_EQ(d.refused[0].key, "node.name");
}

TEST(ReloadDiff, VipsAreMatchedByAddressAndInterface) {
  Config next = base();
  next.vips[0].address = *IpPrefix::parse("198.51.100.50/28");
  Vip added = next.vips[0];
  added.address = *IpPrefix::parse("198.51.100.53/32");
  next.vips.push_back(added);
  ReloadDiff d = diffReload(base(), next, "a");
  ASSERT_TRUE(d.accepted());
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].format(),
            "vips: changed 198.51.100.50/32 on eth0 -> 198.51.100.50/28 on eth0; added "
            "198.51.100.53/32 on eth0");
}

TEST(ReloadDiff, ClusterNodesAndDaemonChangesAreNamedInSectionOrder) {
  Config next = base();
  next.cluster.heartbeat_interval = 100ms;
  next.cluster.active_key = 2;
  next.cluster.keys.push_back(AuthKey{2, "authkey.2", ""});
  next.nodes[1].priority = 250;
  next.daemon.log_level = "debug";
  ReloadDiff d = diffReload(base(), next, "a");
  ASSERT_TRUE(d.accepted());
  EXPECT_EQ(d.changedSections(), "cluster,nodes,daemon");
  EXPECT_EQ(d.changes[0].format(),
            "cluster: keys [1] -> [1, 2]; active_key 1 -> 2; heartbeat_interval 200ms -> 100ms");
  EXPECT_EQ(d.changes[1].format(), "nodes: b priority 100 -> 250");
  EXPECT_EQ(d.changes[2].format(), "daemon: log_level \"info\" -> \"debug\"");
}

TEST(ReloadDiff, RouteChangesAreNamedInTheirSectionsAndApplyLive) {
  Config running = base();
  VirtualServer vs;
  vs.name = "web";
  vs.address = *Endpoint::parse("198.51.100.80:80", false);
  running.virtual_servers = {vs};
  Config next = running;
  next.virtual_servers[0].route = ServiceRoute{2};
  next.nodes[0].route_metric = 50;
  next.routes.mode = RouteMode::kActiveActive;
  next.routes.table = 100;
  next.routes.hold_down = 30s;
  ReloadDiff d = diffReload(running, next, "a");
  ASSERT_TRUE(d.accepted());
  EXPECT_EQ(d.changedSections(), "nodes,virtual_servers,routes");
  EXPECT_EQ(d.changes[0].format(), "nodes: a route_metric - -> 50");
  EXPECT_EQ(d.changes[1].format(), "virtual_servers: web: route none -> min_healthy 2");
  EXPECT_EQ(d.changes[2].format(),
            "routes: mode \"active-backup\" -> \"active-active\"; table 254 -> 100; hold_down 0s "
            "-> 30s");
}

TEST(ReloadDiff, QuorumHoldChangesLikeTheOtherTimers) {
  Config next = base();
  next.cluster.quorum_hold = 3s;
  ReloadDiff d = diffReload(base(), next, "a");
  ASSERT_TRUE(d.accepted());
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].format(), "cluster: quorum_hold 8s -> 3s");
}

}  // namespace
}  // namespace tandem::config
