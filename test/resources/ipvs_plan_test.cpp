#include "ipvs/ipvs_plan.h"

#include <gtest/gtest.h>
#include <linux/ip_vs.h>
#include <netinet/in.h>

#include <algorithm>
#include <random>

#include "resources/fake_ipvs_kernel.h"

namespace tandem::resources::ipvs {
namespace {

using Kind = Op::Kind;

IpAddress ip(const std::string& text) { return *IpAddress::parse(text); }

ServiceKey tcp(const std::string& address, uint16_t port) {
  ServiceKey k;
  k.address = ip(address);
  k.family = k.address.family;
  k.protocol = IPPROTO_TCP;
  k.port = port;
  return k;
}

Destination dest(const std::string& address, uint16_t port, int32_t weight = 1) {
  Destination d;
  d.key = DestKey{ip(address), port};
  d.family = d.key.address.family;
  d.weight = weight;
  return d;
}

ServiceState svc(ServiceKey key, const std::vector<Destination>& dests, std::string sched = "wlc") {
  ServiceState s;
  s.service.key = key;
  s.service.scheduler = std::move(sched);
  for (const auto& d : dests) s.destinations.push_back(DestinationState{d, 0, 0, 0, {}});
  return s;
}

Table table(std::vector<ServiceState> services) { return Table{std::move(services)}; }

std::vector<Kind> kinds(const std::vector<Op>& ops) {
  std::vector<Kind> k;
  k.reserve(ops.size());
  for (const auto& op : ops) k.push_back(op.kind);
  return k;
}

Table web() {
  return table({svc(tcp("198.51.100.10", 80),
                    {dest("198.51.100.21", 80, 3), dest("198.51.100.22", 80, 5)})});
}

TEST(IpvsPlan, EmptyAgainstEmptyIsEmpty) { EXPECT_TRUE(plan(Table{}, Table{}, true).empty()); }

TEST(IpvsPlan, NoOpPlanIsEmpty) { EXPECT_TRUE(plan(web(), web(), false).empty()); }

TEST(IpvsPlan, KernelBookkeepingAndStatsAreIgnored) {
  Table actual = web();
  actual.services[0].service.flags |= IP_VS_SVC_F_HASHED;
  actual.services[0].stats.conns = 42;
  actual.services[0].destinations[0].active_conns = 7;
  actual.services[0].destinations[1].stats.in_pkts = 9;
  EXPECT_TRUE(plan(web(), actual, true).empty());
}

TEST(IpvsPlan, NetmaskZeroIsTheWholeAddress) {
  Table ipvsadm = web();
  ipvsadm.services[0].service.netmask = 0xffffffff;  // as ipvsadm writes it
  EXPECT_TRUE(plan(web(), ipvsadm, true).empty());
  Table v6 = table({svc(tcp("2001:db8::10", 80), {})});
  Table v6_128 = v6;
  v6_128.services[0].service.netmask = 128;
  EXPECT_TRUE(plan(v6, v6_128, true).empty());
  Table v4_128 = web();
  v4_128.services[0].service.netmask = 128;  // a real (odd) IPv4 mask, not the default
  EXPECT_EQ(kinds(plan(web(), v4_128, true)), std::vector<Kind>{Kind::kEditService});
}

TEST(IpvsPlan, UnsortedTablesAreFine) {
  Table d =
      table({svc(tcp("198.51.100.10", 80), {dest("198.51.100.21", 80), dest("198.51.100.22", 80)}),
             svc(tcp("198.51.100.11", 80), {dest("198.51.100.23", 80)})});
  Table a = d;
  std::reverse(a.services.begin(), a.services.end());
  std::reverse(a.services[1].destinations.begin(), a.services[1].destinations.end());
  EXPECT_TRUE(plan(d, a, true).empty());
}

TEST(IpvsPlan, OneWeightChangeIsOneEdit) {
  Table want = web();
  want.services[0].destinations[1].dest.weight = 0;
  auto ops = plan(want, web(), false);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].kind, Kind::kEditDest);
  EXPECT_EQ(ops[0].service.key, tcp("198.51.100.10", 80));
  ASSERT_TRUE(ops[0].dest);
  EXPECT_EQ(*ops[0].dest, want.services[0].destinations[1].dest);
}

TEST(IpvsPlan, EmptyKernelGetsServiceThenItsDestinations) {
  auto ops = plan(web(), Table{}, false);
  EXPECT_EQ(kinds(ops), (std::vector<Kind>{Kind::kAddService, Kind::kAddDest, Kind::kAddDest}));
  EXPECT_EQ(ops[0].service, web().services[0].service);
  EXPECT_EQ(ops[1].dest->key.address, ip("198.51.100.21"));
  EXPECT_EQ(ops[2].dest->key.address, ip("198.51.100.22"));
}

TEST(IpvsPlan, SchedulerChangeIsEditedInPlace) {
  Table want = web();
  want.services[0].service.scheduler = "rr";
  auto ops = plan(want, web(), false);
  EXPECT_EQ(kinds(ops), std::vector<Kind>{Kind::kEditService});
  EXPECT_EQ(ops[0].service.scheduler, "rr");
}

TEST(IpvsPlan, FlagsTimeoutNetmaskAndPeAreEditedInPlace) {
  for (int field = 0; field < 4; ++field) {
    Table want = web();
    Service& s = want.services[0].service;
    if (field == 0) s.flags = IP_VS_SVC_F_SCHED1;
    if (field == 1) s.timeout_s = 300;
    if (field == 2) s.netmask = 0xffffff00;
    if (field == 3) s.pe_name = "sip";
    EXPECT_EQ(kinds(plan(want, web(), false)), std::vector<Kind>{Kind::kEditService}) << field;
  }
}

TEST(IpvsPlan, NewServiceKeyIsAddPlusDeleteOfTheOldWithManageAll) {
  Table want = web();
  want.services[0].service.key.port = 8080;
  auto ops = plan(want, web(), true);
  EXPECT_EQ(kinds(ops), (std::vector<Kind>{Kind::kAddService, Kind::kAddDest, Kind::kAddDest,
                                           Kind::kDelService}));
  EXPECT_EQ(ops.back().service.key, tcp("198.51.100.10", 80));
}

TEST(IpvsPlan, UnownedServicesAreLeftAloneUnlessManageAll) {
  Table actual = web();
  actual.services.push_back(svc(tcp("203.0.113.5", 25), {dest("203.0.113.6", 25)}));
  EXPECT_TRUE(plan(web(), actual, false).empty());
  auto ops = plan(web(), actual, true);
  ASSERT_EQ(ops.size(), 1u) << "one delete takes the destinations with it";
  EXPECT_EQ(ops[0].kind, Kind::kDelService);
  EXPECT_EQ(ops[0].service.key, tcp("203.0.113.5", 25));
}

TEST(IpvsPlan, RetiredServicesAreDeletedEvenWhenOwnedOnly) {
  Table actual = web();
  actual.services.push_back(svc(tcp("203.0.113.5", 25), {dest("203.0.113.6", 25)}));
  actual.services.push_back(svc(tcp("203.0.113.7", 25), {}));
  auto ops = plan(web(), actual, false, {tcp("203.0.113.5", 25), tcp("203.0.113.99", 1)});
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].kind, Kind::kDelService);
  EXPECT_EQ(ops[0].service.key, tcp("203.0.113.5", 25));
}

TEST(IpvsPlan, ExtraDestinationsOfAnOwnedServiceAreDeletedAfterAdds) {
  Table want = table({svc(tcp("198.51.100.10", 80), {dest("198.51.100.23", 80)})});
  auto ops = plan(want, web(), false);
  EXPECT_EQ(kinds(ops), (std::vector<Kind>{Kind::kAddDest, Kind::kDelDest, Kind::kDelDest}))
      << "the new server goes in before the old ones leave";
}

TEST(IpvsPlan, ForwardingThresholdsAndTunnelAreEditedInPlace) {
  for (int field = 0; field < 5; ++field) {
    Table want = web();
    Destination& d = want.services[0].destinations[0].dest;
    if (field == 0) d.forward = Forward::kDirectRoute;
    if (field == 1) d.upper_threshold = 10;
    if (field == 2) d.lower_threshold = 5;
    if (field == 3) {
      d.forward = Forward::kTunnel;
      d.tunnel_type = Tunnel::kGue;
      d.tunnel_port = 6080;
    }
    if (field == 4) {
      d.forward = Forward::kTunnel;
      d.tunnel_flags = IP_VS_TUNNEL_ENCAP_FLAG_CSUM;
    }
    EXPECT_EQ(kinds(plan(want, web(), false)), std::vector<Kind>{Kind::kEditDest}) << field;
  }
}

TEST(IpvsPlan, DestinationFamilyChangeIsDeleteThenAdd) {
  Table want = web();
  want.services[0].destinations[0].dest.family = Family::kInet6;  // as a tunnel would carry it
  want.services[0].destinations[0].dest.forward = Forward::kTunnel;
  auto ops = plan(want, web(), false);
  EXPECT_EQ(kinds(ops), (std::vector<Kind>{Kind::kDelDest, Kind::kAddDest}));
  EXPECT_EQ(ops[0].dest->family, Family::kInet);
  EXPECT_EQ(ops[1].dest->family, Family::kInet6);
}

TEST(IpvsPlan, ServiceEditComesBeforeItsDestinationChanges) {
  Table want = web();
  want.services[0].service.scheduler = "rr";
  want.services[0].destinations[0].dest.weight = 9;
  want.services[0].destinations.push_back(DestinationState{dest("198.51.100.30", 80), 0, 0, 0, {}});
  auto ops = plan(want, web(), false);
  EXPECT_EQ(kinds(ops), (std::vector<Kind>{Kind::kEditService, Kind::kEditDest, Kind::kAddDest}));
}

TEST(IpvsPlan, Ipv6AndFwmarkServicesAreKeysLikeAnyOther) {
  ServiceKey mark;
  mark.family = Family::kInet6;
  mark.fwmark = 7;
  ServiceKey mark4 = mark;
  mark4.family = Family::kInet;
  Table want = table({svc(tcp("2001:db8::10", 443), {dest("2001:db8::21", 443)}),
                      svc(mark, {dest("2001:db8::22", 0)})});
  Table actual = table({svc(mark4, {dest("198.51.100.22", 0)})});
  auto ops = plan(want, actual, true);
  EXPECT_EQ(kinds(ops), (std::vector<Kind>{Kind::kAddService, Kind::kAddDest, Kind::kAddService,
                                           Kind::kAddDest, Kind::kDelService}));
}

// Property: for random pairs of tables, the plan applied by a kernel that answers like the
// real one succeeds op by op, yields the desired table (plus, when tandem does not manage the
// whole table, the services it leaves alone), and a second plan is empty.
class RandomTables {
 public:
  explicit RandomTables(uint32_t seed) : rng_(seed) {}

  Table make() {
    Table t;
    std::set<ServiceKey> keys;
    const int n = pick(0, 6);
    for (int i = 0; i < n; ++i) {
      ServiceState s;
      s.service.key = serviceKey();
      if (!keys.insert(s.service.key).second) continue;
      s.service.scheduler = pick(0, 1) ? "wlc" : "rr";
      s.service.flags = pick(0, 3) == 0 ? IP_VS_SVC_F_PERSISTENT : 0;
      s.service.timeout_s = s.service.flags ? static_cast<uint32_t>(pick(1, 2) * 300) : 0;
      s.service.netmask = pick(0, 1) ? 0 : 0xffffffff;  // the same mask, two spellings
      std::set<DestKey> dkeys;
      const int m = pick(0, 4);
      for (int j = 0; j < m; ++j) {
        Destination d;
        d.key = DestKey{ip("198.51.100." + std::to_string(20 + pick(0, 5))),
                        static_cast<uint16_t>(80 + pick(0, 1))};
        if (!dkeys.insert(d.key).second) continue;
        d.family = d.key.address.family;
        d.weight = pick(0, 3);
        d.forward = pick(0, 1) ? Forward::kMasq : Forward::kDirectRoute;
        d.upper_threshold = static_cast<uint32_t>(pick(0, 1) * 100);
        if (pick(0, 5) == 0) {
          d.forward = Forward::kTunnel;
          d.family = Family::kInet6;  // a family change must go delete + add
        }
        s.destinations.push_back(DestinationState{d, 0, 0, 0, {}});
      }
      t.services.push_back(std::move(s));
    }
    return t;
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  ServiceKey serviceKey() {
    if (pick(0, 4) == 0) {
      ServiceKey k;
      k.fwmark = static_cast<uint32_t>(pick(1, 2));
      return k;
    }
    ServiceKey k = tcp("198.51.100." + std::to_string(10 + pick(0, 2)),
                       static_cast<uint16_t>(pick(0, 1) ? 80 : 443));
    if (pick(0, 3) == 0) k.protocol = IPPROTO_UDP;
    return k;
  }
  std::mt19937 rng_;
};

Table normalised(Table t) {
  std::sort(t.services.begin(), t.services.end(), [](const ServiceState& a, const ServiceState& b) {
    return a.service.key < b.service.key;
  });
  for (auto& s : t.services) {
    std::sort(s.destinations.begin(), s.destinations.end(),
              [](const DestinationState& a, const DestinationState& b) {
                return a.dest.key < b.dest.key;
              });
  }
  return t;
}

bool sameTable(const Table& x, const Table& y) {
  Table a = normalised(x), b = normalised(y);
  if (a.services.size() != b.services.size()) return false;
  for (size_t i = 0; i < a.services.size(); ++i) {
    if (!sameService(a.services[i].service, b.services[i].service)) return false;
    if (a.services[i].destinations.size() != b.services[i].destinations.size()) return false;
    for (size_t j = 0; j < a.services[i].destinations.size(); ++j) {
      if (!(a.services[i].destinations[j].dest == b.services[i].destinations[j].dest)) {
        return false;
      }
    }
  }
  return true;
}

TEST(IpvsPlan, RandomTablesConvergeInOnePlanAndReplanIsEmpty) {
  size_t total_ops = 0, nonempty = 0;
  for (uint32_t seed = 1; seed <= 2000; ++seed) {
    RandomTables gen(seed);
    const Table desired = gen.make();
    const Table actual = gen.make();
    const bool manage_all = seed % 2 == 0;
    fakes::FakeIpvsKernel kernel;
    kernel.load(actual);
    auto ops = plan(desired, kernel.table(), manage_all);
    total_ops += ops.size();
    nonempty += ops.empty() ? 0 : 1;
    for (const Op& op : ops) {
      auto r = kernel.applyNow(op);
      ASSERT_TRUE(r) << "seed " << seed << ": " << r.error().message;
    }
    EXPECT_EQ(kernel.writes(), ops.size());

    Table expected = desired;
    if (!manage_all) {
      for (const auto& s : actual.services) {
        bool wanted =
            std::any_of(desired.services.begin(), desired.services.end(),
                        [&](const ServiceState& d) { return d.service.key == s.service.key; });
        if (!wanted) expected.services.push_back(s);
      }
    }
    EXPECT_TRUE(sameTable(kernel.sorted(), expected)) << "seed " << seed;
    EXPECT_TRUE(plan(desired, kernel.table(), manage_all).empty()) << "seed " << seed;
  }
  // The generator must exercise the planner, not hand it empty diffs.
  EXPECT_GT(nonempty, 1500u);
  EXPECT_GT(total_ops, 10000u);
}

// The planner in steps makes plan()'s requests, in plan()'s order, whatever the step size; a
// step never plans more services than it was given.
TEST(IpvsPlan, APlanInStepsIsTheWholePlan) {
  size_t stepped = 0;
  for (uint32_t seed = 1; seed <= 500; ++seed) {
    RandomTables gen(seed);
    const Table desired = gen.make();
    const Table actual = gen.make();
    const std::set<ServiceKey> retired =
        actual.services.empty() ? std::set<ServiceKey>{}
                                : std::set<ServiceKey>{actual.services.front().service.key};
    const bool manage_all = seed % 2 == 0;
    const auto whole = plan(desired, actual, manage_all, retired);
    for (size_t step : {size_t{1}, size_t{2}, size_t{5}}) {
      Planner planner(desired, actual, manage_all, retired);
      std::vector<Op> ops;
      size_t calls = 0;
      while (!planner.next(step, ops)) ++calls;
      EXPECT_TRUE(planner.done());
      EXPECT_EQ(ops, whole) << "seed " << seed << " step " << step;
      EXPECT_EQ(calls,
                desired.services.size() / step -
                    (desired.services.size() % step == 0 && !desired.services.empty() ? 1 : 0))
          << "seed " << seed << " step " << step;
      stepped += calls;
    }
  }
  EXPECT_GT(stepped, 1000u) << "the generator gives tables of more than one service";
}

TEST(IpvsPlan, RandomTablesPlansAreMinimal) {
  // Every op is needed: an add finds nothing there, an edit or delete finds the entry and an
  // edit changes it; a delete + add of one destination only for a family change; no
  // destination op on a service that is being deleted.
  for (uint32_t seed = 1; seed <= 500; ++seed) {
    RandomTables gen(seed);
    const Table desired = gen.make();
    const Table actual = gen.make();
    std::map<ServiceKey, const ServiceState*> have;
    for (const auto& s : actual.services) have[s.service.key] = &s;
    auto find_dest = [&](const ServiceKey& k, const DestKey& d) -> const Destination* {
      auto it = have.find(k);
      if (it == have.end()) return nullptr;
      for (const auto& ds : it->second->destinations) {
        if (ds.dest.key == d) return &ds.dest;
      }
      return nullptr;
    };
    const auto ops = plan(desired, actual, true);
    std::set<ServiceKey> deleted;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const auto it = have.find(op.service.key);
      const bool svc_there = it != have.end();
      switch (op.kind) {
        case Kind::kAddService:
          EXPECT_FALSE(svc_there) << "seed " << seed;
          break;
        case Kind::kEditService:
          ASSERT_TRUE(svc_there) << "seed " << seed;
          EXPECT_FALSE(sameService(op.service, it->second->service)) << "seed " << seed;
          break;
        case Kind::kDelService:
          EXPECT_TRUE(svc_there) << "seed " << seed;
          deleted.insert(op.service.key);
          break;
        case Kind::kAddDest: {
          const Destination* d = find_dest(op.service.key, op.dest->key);
          if (d != nullptr) {  // only as the second half of a family change
            EXPECT_NE(d->family, op.dest->family) << "seed " << seed;
            ASSERT_GT(i, 0u);
            EXPECT_EQ(ops[i - 1].kind, Kind::kDelDest) << "seed " << seed;
          }
          break;
        }
        case Kind::kEditDest: {
          const Destination* d = find_dest(op.service.key, op.dest->key);
          ASSERT_NE(d, nullptr) << "seed " << seed;
          EXPECT_FALSE(*d == *op.dest) << "seed " << seed;
          break;
        }
        case Kind::kDelDest:
          EXPECT_NE(find_dest(op.service.key, op.dest->key), nullptr) << "seed " << seed;
          break;
      }
      if (op.dest) {
        EXPECT_EQ(deleted.count(op.service.key), 0u) << "seed " << seed;
      }
    }
    EXPECT_TRUE(plan(desired, desired, true).empty());
  }
}

// applyOp is the reconciler's model of the kernel between dumps: applied to the planned ops it
// must give what the (fake) kernel gives.
TEST(IpvsPlan, ApplyOpPredictsTheKernelsTable) {
  for (uint32_t seed = 1; seed <= 2000; ++seed) {
    RandomTables gen(seed);
    const Table desired = gen.make();
    const Table actual = gen.make();
    const bool manage_all = seed % 3 == 0;
    fakes::FakeIpvsKernel kernel;
    kernel.load(actual);
    Table model = normalised(actual);
    for (const Op& op : plan(desired, kernel.table(), manage_all)) {
      ASSERT_TRUE(kernel.applyNow(op)) << "seed " << seed;
      applyOp(model, op);
    }
    EXPECT_TRUE(sameTable(kernel.sorted(), model)) << "seed " << seed;
    EXPECT_TRUE(std::is_sorted(
        model.services.begin(), model.services.end(),
        [](const ServiceState& a, const ServiceState& b) { return a.service.key < b.service.key; }))
        << "seed " << seed;
  }
}

}  // namespace
}  // namespace tandem::resources::ipvs
