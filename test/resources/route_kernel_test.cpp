// NetlinkRouteTable over real rtnetlink, in a private network namespace this process creates
// (unshare(CLONE_NEWNET)), with two ifb devices, rt0 and rt1 (this lab's kernel has no dummy
// devices; any device will do for a route). Routes from 198.51.100.0/24 and 2001:db8::/32 only.
// `ip -j route` is the independent reader. Needs root: otherwise it prints SKIPPED and succeeds,
// unless TANDEM_TEST_NO_SKIP=1.
#include <gtest/gtest.h>
#include <linux/rtnetlink.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fakes/sim_dispatcher.h"
#include "must_run.h"
#include "route/netlink_route_table.h"

namespace tandem::resources::route {
namespace {

using test::sh;

// What `ip -j [-6] route show table T` lists for dst: "dev=rt0 protocol=190 metric=20 type=...".
std::string ipRoute(const std::string& family, uint32_t table, const std::string& dst) {
  auto j = nlohmann::json::parse(
      sh("ip -j " + family + " route show table " + std::to_string(table)), nullptr, false);
  if (j.is_discarded() || !j.is_array()) return "unreadable";
  for (const auto& r : j) {
    if (r.value("dst", "") != dst) continue;
    std::string out = "dev=" + r.value("dev", "-");
    // ip -j prints a known protocol by name and an unknown one by number, as text or number.
    const auto& p = r.contains("protocol") ? r["protocol"] : nlohmann::json("-");
    out += " protocol=" + (p.is_string() ? p.get<std::string>() : std::to_string(p.get<int>()));
    out += " metric=" + std::to_string(r.value("metric", 0));
    out += " type=" + r.value("type", "unicast");
    return out;
  }
  return "absent";
}

class RouteKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = NetlinkRouteTable::open(sim_);
    ASSERT_TRUE(t) << t.error().message;
    table_ = std::move(*t);
    auto ifindex = table_->interfaceIndex("rt0");
    ASSERT_TRUE(ifindex) << ifindex.error().message;
    rt0_ = *ifindex;
  }
  void TearDown() override { sh("ip route flush table 100; ip -6 route flush table 100"); }

  fakes::SimDispatcher sim_;
  std::unique_ptr<NetlinkRouteTable> table_;
  uint32_t rt0_ = 0;
};

TEST_F(RouteKernelTest, AddListRemoveAnIpv4HostRouteThroughAnInterface) {
  rtnl::RouteRequest req{*IpPrefix::parse("198.51.100.80/32"), 100, 190, 20, rt0_};
  ASSERT_TRUE(table_->add(req));
  EXPECT_EQ(ipRoute("-4", 100, "198.51.100.80"), "dev=rt0 protocol=190 metric=20 type=unicast");
  auto listed = table_->routes(100, 190);
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].prefix.toString(), "198.51.100.80/32");
  EXPECT_EQ((*listed)[0].ifindex, rt0_);
  EXPECT_EQ((*listed)[0].metric, 20u);

  auto again = table_->add(req);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kAlreadyExists) << again.error().message;

  ASSERT_TRUE(table_->remove(req));
  EXPECT_EQ(ipRoute("-4", 100, "198.51.100.80"), "absent");
  auto gone = table_->remove(req);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound) << gone.error().message;
  EXPECT_NE(gone.error().message.find("cannot remove route 198.51.100.80/32 (table 100"),
            std::string::npos)
      << gone.error().message;
}

TEST_F(RouteKernelTest, Ipv6AndABlackholeInATableAbove255) {
  rtnl::RouteRequest six{*IpPrefix::parse("2001:db8:5::80/128"), 100, 190, 0, rt0_};
  rtnl::RouteRequest hole{*IpPrefix::parse("198.51.100.81/32"), 1000, 190, 30, 0};
  ASSERT_TRUE(table_->add(six));
  ASSERT_TRUE(table_->add(hole));
  EXPECT_EQ(ipRoute("-6", 100, "2001:db8:5::80"), "dev=rt0 protocol=190 metric=1024 type=unicast")
      << "an IPv6 route without a metric gets the kernel's 1024";
  EXPECT_EQ(ipRoute("-4", 1000, "198.51.100.81"), "dev=- protocol=190 metric=30 type=blackhole");
  auto in1000 = table_->routes(1000, 190);
  ASSERT_TRUE(in1000);
  ASSERT_EQ(in1000->size(), 1u);
  EXPECT_EQ((*in1000)[0].table, 1000u);
  EXPECT_EQ((*in1000)[0].type, RTN_BLACKHOLE);
  ASSERT_TRUE(table_->remove(six));
  ASSERT_TRUE(table_->remove(hole));
  EXPECT_EQ(ipRoute("-4", 1000, "198.51.100.81"), "absent");
}

TEST_F(RouteKernelTest, OnlyTheRoutesOfItsProtocolAndTableAreListed) {
  sh("ip route add 198.51.100.90/32 dev rt0 proto 191 table 100;"
     "ip route add 198.51.100.91/32 dev rt0 proto 190 table 101;"
     "ip route add 198.51.100.92/32 dev rt0 proto 190 table 100");
  auto listed = table_->routes(100, 190);
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u) << sh("ip route show table all");
  EXPECT_EQ((*listed)[0].prefix.toString(), "198.51.100.92/32");
  sh("ip route flush table 101");
}

// What the route subsystem's reload relies on to make before break: another metric or table is
// another route (both stand at once), while another interface at the same table and metric is
// the same route to the kernel and a second add is refused, for IPv4 and IPv6 alike.
TEST_F(RouteKernelTest, AnotherMetricStandsBesideARouteAnotherInterfaceAtItsMetricDoesNot) {
  auto rt1 = table_->interfaceIndex("rt1");
  ASSERT_TRUE(rt1) << rt1.error().message;
  for (const char* dst : {"198.51.100.83/32", "2001:db8:5::83/128"}) {
    const IpPrefix prefix = *IpPrefix::parse(dst);
    rtnl::RouteRequest first{prefix, 100, 190, 20, rt0_};
    ASSERT_TRUE(table_->add(first)) << dst;
    rtnl::RouteRequest other_metric{prefix, 100, 190, 50, rt0_};
    EXPECT_TRUE(table_->add(other_metric)) << dst;
    rtnl::RouteRequest other_table{prefix, 101, 190, 20, rt0_};
    EXPECT_TRUE(table_->add(other_table)) << dst;
    rtnl::RouteRequest other_dev{prefix, 100, 190, 20, *rt1};
    auto refused = table_->add(other_dev);
    ASSERT_FALSE(refused) << dst << ": " << sh("ip -6 route show table 100");
    EXPECT_EQ(refused.error().code, ErrorCode::kAlreadyExists) << refused.error().message;
    auto listed = table_->routes(100, 190);
    ASSERT_TRUE(listed);
    EXPECT_EQ(listed->size(), 2u) << dst;
    for (const auto& r : {first, other_metric, other_table}) EXPECT_TRUE(table_->remove(r)) << dst;
  }
  sh("ip route flush table 101; ip -6 route flush table 101");
}

// The reconcile lists tandem's routes every few seconds, also from the main table, which may
// hold a routing daemon's whole view: the kernel filters by table and protocol, so the listing
// reads tandem's routes only, and a table never used is an empty listing, not an error.
TEST_F(RouteKernelTest, TheKernelFiltersTheListingByTableAndProtocol) {
  ASSERT_TRUE(table_->kernelFilters()) << "NETLINK_GET_STRICT_CHK refused (Linux 4.20 and later)";
  sh("for i in $(seq 1 200); do echo route add 198.51.100.$((i % 250))/32 dev rt0 proto 191 "
     "table 100 metric $i; done | ip -batch -; "
     "for i in $(seq 1 200); do echo route add 2001:db8:7::$i/128 dev rt0 table 100; done | "
     "ip -6 -batch -");
  rtnl::RouteRequest mine{*IpPrefix::parse("198.51.100.84/32"), 100, 190, 20, rt0_};
  ASSERT_TRUE(table_->add(mine));
  auto listed = table_->routes(100, 190);
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].prefix.toString(), "198.51.100.84/32");
  // The route and each family's end of dump, not the 400 others.
  EXPECT_LE(table_->lastDumpSize(), 3u);
  auto never_used = table_->routes(4242, 190);
  ASSERT_TRUE(never_used) << never_used.error().message;
  EXPECT_TRUE(never_used->empty());
}

// The kill -9 defence: an owned device is a tun that the kernel deletes with its last
// descriptor, taking its routes along; here the table is destroyed, as a process's exit would
// close the descriptor.
TEST_F(RouteKernelTest, AnOwnedInterfaceIsUpAndItsRoutesGoWhenItsOwnerEnds) {
  auto owner = NetlinkRouteTable::open(sim_);
  ASSERT_TRUE(owner) << owner.error().message;
  auto index = (*owner)->ownInterface("rhi0");
  ASSERT_TRUE(index) << index.error().message;
  EXPECT_EQ(*(*owner)->ownInterface("rhi0"), *index);  // asked again: the same device
  EXPECT_NE(sh("ip -o link show rhi0").find(",UP"), std::string::npos) << sh("ip link show rhi0");
  ASSERT_TRUE(
      (*owner)->add(rtnl::RouteRequest{*IpPrefix::parse("198.51.100.90/32"), 100, 190, 0, *index}));
  EXPECT_EQ(ipRoute("", 100, "198.51.100.90"), "dev=rhi0 protocol=190 metric=0 type=unicast");
  owner->reset();
  EXPECT_EQ(ipRoute("", 100, "198.51.100.90"), "absent");
  EXPECT_EQ(sh("ip -o link show rhi0 2>&1"), "Device \"rhi0\" does not exist.\n");
}

TEST_F(RouteKernelTest, OwningAnotherNameDeletesTheFirstDeviceAndReleaseDeletesTheLast) {
  ASSERT_TRUE(table_->ownInterface("rhi0"));
  ASSERT_TRUE(table_->ownInterface("rhi1"));
  EXPECT_EQ(sh("ip -o link show rhi0 2>&1"), "Device \"rhi0\" does not exist.\n");
  EXPECT_NE(sh("ip -o link show rhi1"), "");
  table_->releaseOwnedInterface();
  EXPECT_EQ(sh("ip -o link show rhi1 2>&1"), "Device \"rhi1\" does not exist.\n");
}

// The kernel hangs an IPv6 blackhole on lo: it is listed with its type, blackhole.
TEST_F(RouteKernelTest, AnIpv6BlackholeIsListedAsABlackholeOnLo) {
  rtnl::RouteRequest hole6{*IpPrefix::parse("2001:db8:5::81/128"), 100, 201, 0, 0};
  ASSERT_TRUE(table_->add(hole6));
  auto listed = table_->routes(100, 201);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].type, RTN_BLACKHOLE);
  EXPECT_EQ((*listed)[0].ifindex, 1u);
  EXPECT_TRUE(table_->remove(hole6));
}

TEST_F(RouteKernelTest, AnInterfaceItDidNotCreateIsNeverOwned) {
  auto r = table_->ownInterface("rt0");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(r.error().message, "interface rt0 exists already and is not tandemd's own device");
  EXPECT_FALSE(table_->ownInterface("name-much-too-long0"));
}

TEST_F(RouteKernelTest, AMissingInterfaceIsNotFoundAndNamed) {
  auto r = table_->interfaceIndex("nosuch0");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().message, "interface nosuch0 does not exist");
  auto add =
      table_->add(rtnl::RouteRequest{*IpPrefix::parse("198.51.100.82/32"), 100, 190, 0, 999});
  ASSERT_FALSE(add);
  EXPECT_NE(add.error().message.find("cannot add route 198.51.100.82/32"), std::string::npos)
      << add.error().message;
}

}  // namespace
}  // namespace tandem::resources::route

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  using tandem::test::cannotRun;
  const std::string why = tandem::test::enterPrivateNetns("a private network namespace, ifb");
  if (!why.empty()) return cannotRun(why);
  // From here on nothing touches the host's network: the namespace dies with this process.
  int st = 0;
  std::string out = tandem::test::sh(
      "ip link set lo up && ip link add rt0 type ifb && ip link add rt1 type ifb && "
      "ip link set rt0 up && ip link set rt1 up",
      &st);
  if (st != 0) return cannotRun("cannot create an ifb device with ip(8): " + out);
  return RUN_ALL_TESTS();
}
