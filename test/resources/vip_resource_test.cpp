// VipResource against a fake address table: adopt, add, replace, refuse, restore, release.
#include "vip/vip_resource.h"

#include <gtest/gtest.h>
#include <linux/if_addr.h>

#include "core/resource_chain.h"
#include "fakes/sim_dispatcher.h"
#include "resources/fake_address_table.h"

namespace tandem::resources {
namespace {

using namespace std::chrono_literals;

config::Vip vip(const char* prefix, const char* ifname = "eth0", const char* label = "") {
  config::Vip v;
  v.address = *IpPrefix::parse(prefix);
  v.interface = ifname;
  v.label = label;
  return v;
}

Result<void> run(void (Resource::*op)(Done), Resource& r) {
  std::optional<Result<void>> got;
  (r.*op)([&](Result<void> res) {
    EXPECT_FALSE(got.has_value()) << "done called twice";
    got = std::move(res);
  });
  EXPECT_TRUE(got.has_value()) << "done not called";
  return got ? *got : Result<void>(fail(ErrorCode::kInternal, "no answer"));
}

class VipResourceTest : public ::testing::Test {
 protected:
  VipResourceTest() : table_(std::make_shared<fakes::FakeAddressTable>()) {
    table_->addInterface("eth0", 2);
    table_->addInterface("eth1", 3);
  }

  std::unique_ptr<VipResource> make(config::Vip v) {
    return std::make_unique<VipResource>(std::move(v), table_,
                                         [this](LogLevel level, const std::string& line) {
                                           lines_.push_back({level, line});
                                         });
  }
  size_t logged(LogLevel level, std::string_view text) const {
    size_t n = 0;
    for (const auto& [l, s] : lines_) n += (l == level && s.find(text) != std::string::npos);
    return n;
  }
  std::string allLines() const {
    std::string s;
    for (const auto& [l, line] : lines_) s += line + "\n";
    return s;
  }

  std::shared_ptr<fakes::FakeAddressTable> table_;
  std::vector<std::pair<LogLevel, std::string>> lines_;
};

TEST_F(VipResourceTest, StartAddsAnIpv4VipWithItsLabel) {
  auto r = make(vip("198.51.100.50/24", "eth0", "eth0:web"));
  EXPECT_EQ(r->name(), "vip 198.51.100.50/24");
  EXPECT_FALSE(r->present());
  ASSERT_TRUE(run(&Resource::start, *r));
  ASSERT_EQ(table_->added.size(), 1u);
  EXPECT_EQ(table_->added[0].ifindex, 2u);
  EXPECT_EQ(table_->added[0].label, "eth0:web");
  EXPECT_FALSE(table_->added[0].nodad);
  EXPECT_TRUE(table_->find("eth0", "198.51.100.50/24"));
  EXPECT_TRUE(r->present());
  EXPECT_EQ(logged(LogLevel::kNotice, "VIP 198.51.100.50/24 on eth0 added label=eth0:web"), 1u)
      << allLines();
}

TEST_F(VipResourceTest, StartAddsAnIpv6VipWithoutDuplicateAddressDetection) {
  auto r = make(vip("2001:db8::50/64"));
  ASSERT_TRUE(run(&Resource::start, *r));
  ASSERT_EQ(table_->added.size(), 1u);
  EXPECT_TRUE(table_->added[0].nodad);
  EXPECT_EQ(table_->added[0].label, "");
  EXPECT_EQ(table_->added[0].prefix, *IpPrefix::parse("2001:db8::50/64"));
}

TEST_F(VipResourceTest, StartAdoptsAnEqualAddressWithoutWritingAnything) {
  table_->put("eth0", "198.51.100.50/24");
  auto r = make(vip("198.51.100.50/24"));
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_EQ(table_->adds, 0);
  EXPECT_EQ(table_->removes, 0);
  EXPECT_EQ(logged(LogLevel::kNotice,
                   "VIP 198.51.100.50/24 on eth0 is already in place; "
                   "adopted it"),
            1u)
      << allLines();
  // Starting again (the election re-runs start) is just as quiet.
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_EQ(table_->adds + table_->removes, 0);
  EXPECT_EQ(lines_.size(), 1u) << allLines();
}

TEST_F(VipResourceTest, ARestartedDaemonSeesItHoldsTheVipAndDoesNotFlapIt) {
  auto first = make(vip("198.51.100.50/24", "eth0", "eth0:web"));
  ASSERT_TRUE(run(&Resource::start, *first));
  first.reset();  // tandemd exits without stopping (kill, crash, upgrade)
  const int adds = table_->adds;

  auto second = make(vip("198.51.100.50/24", "eth0", "eth0:web"));
  EXPECT_TRUE(second->present());
  ASSERT_TRUE(run(&Resource::start, *second));
  ASSERT_TRUE(run(&Resource::monitor, *second));
  EXPECT_EQ(table_->adds, adds);
  EXPECT_EQ(table_->removes, 0);
}

TEST_F(VipResourceTest, AdoptingWithAnotherLabelSaysSoAndLeavesIt) {
  table_->put("eth0", "198.51.100.50/24", 0, "eth0:old");
  auto r = make(vip("198.51.100.50/24", "eth0", "eth0:web"));
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_EQ(table_->adds + table_->removes, 0);
  EXPECT_EQ(logged(LogLevel::kNotice, "its label is \"eth0:old\", the config says \"eth0:web\""),
            1u)
      << allLines();
}

TEST_F(VipResourceTest, StartReplacesTheAddressWithAnotherPrefix) {
  table_->put("eth0", "198.51.100.50/25");
  auto r = make(vip("198.51.100.50/24"));
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_FALSE(table_->find("eth0", "198.51.100.50/25"));
  EXPECT_TRUE(table_->find("eth0", "198.51.100.50/24"));
  EXPECT_EQ(logged(LogLevel::kWarning, "was there as 198.51.100.50/25; replacing it"), 1u)
      << allLines();
}

TEST_F(VipResourceTest, StartReplacesAnIpv6AddressWhoseDuplicateDetectionFailed) {
  table_->put("eth0", "2001:db8::50/64", IFA_F_DADFAILED | IFA_F_TENTATIVE);
  auto r = make(vip("2001:db8::50/64"));
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_EQ(table_->removes, 1);
  ASSERT_EQ(table_->added.size(), 1u);
  EXPECT_TRUE(table_->added[0].nodad);
  EXPECT_EQ(table_->find("eth0", "2001:db8::50/64")->flags & IFA_F_DADFAILED, 0u);
}

TEST_F(VipResourceTest, StartRefusesAnAddressThatIsOnAnotherInterface) {
  table_->put("eth1", "198.51.100.50/24");
  auto r = make(vip("198.51.100.50/24"));
  auto res = run(&Resource::start, *r);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(res.error().message,
            "VIP 198.51.100.50/24 on eth0: 198.51.100.50 is already on eth1 (as "
            "198.51.100.50/24); remove it there or fix vip.interface");
  EXPECT_EQ(table_->adds + table_->removes, 0);
  EXPECT_FALSE(r->present());
}

TEST_F(VipResourceTest, StartFailsClearlyWhenTheInterfaceIsMissing) {
  auto r = make(vip("198.51.100.50/24", "eth9"));
  auto res = run(&Resource::start, *r);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(res.error().message,
            "VIP 198.51.100.50/24 on eth9: interface eth9 does not exist on this director; "
            "create it or fix vip.interface");
  EXPECT_FALSE(r->present());
}

TEST_F(VipResourceTest, StartWithoutThePrivilegeSaysWhatIsNeeded) {
  table_->fail_add = Error{ErrorCode::kPermissionDenied,
                           "cannot add 198.51.100.50/24 on eth0: Operation not permitted"};
  auto r = make(vip("198.51.100.50/24"));
  auto res = run(&Resource::start, *r);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(res.error().message,
            "cannot add 198.51.100.50/24 on eth0: Operation not permitted; tandemd needs "
            "CAP_NET_ADMIN (run it as root)");
}

TEST_F(VipResourceTest, StartFailsWhenTheTableCannotBeRead) {
  table_->fail_dump = Error{ErrorCode::kTimeout, "the kernel did not answer within 1000 ms"};
  auto r = make(vip("198.51.100.50/24"));
  auto res = run(&Resource::start, *r);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(res.error().message,
            "VIP 198.51.100.50/24 on eth0: the kernel did not answer within 1000 ms");
}

TEST_F(VipResourceTest, AnAddressAppearingDuringStartIsAdoptedNotAnError) {
  // Someone adds it between tandem's dump and its add: the add gets EEXIST, and a fresh dump
  // shows it in place.
  table_->after_dump = [&] { table_->put("eth0", "198.51.100.50/24"); };
  auto r = make(vip("198.51.100.50/24"));
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_EQ(table_->adds, 1);
  EXPECT_EQ(table_->dumps, 2);
  EXPECT_EQ(table_->entries().size(), 1u);
  EXPECT_EQ(logged(LogLevel::kNotice, "adopted it"), 1u) << allLines();
}

TEST_F(VipResourceTest, StopRemovesAndStoppingAgainSucceeds) {
  auto r = make(vip("198.51.100.50/24", "eth0", "eth0:web"));
  ASSERT_TRUE(run(&Resource::start, *r));
  ASSERT_TRUE(run(&Resource::stop, *r));
  EXPECT_TRUE(table_->entries().empty());
  EXPECT_FALSE(r->present());
  EXPECT_EQ(logged(LogLevel::kNotice, "VIP 198.51.100.50/24 on eth0 removed"), 1u);
  ASSERT_TRUE(run(&Resource::stop, *r));
  EXPECT_EQ(table_->removes, 1);
}

TEST_F(VipResourceTest, StopRemovesTheAddressWhateverItsPrefixButLeavesOtherInterfaces) {
  table_->put("eth0", "198.51.100.50/25");
  table_->put("eth1", "198.51.100.50/24");
  table_->put("eth0", "198.51.100.51/24");
  auto r = make(vip("198.51.100.50/24"));
  ASSERT_TRUE(run(&Resource::stop, *r));
  EXPECT_FALSE(table_->find("eth0", "198.51.100.50/25"));
  EXPECT_TRUE(table_->find("eth1", "198.51.100.50/24"));
  EXPECT_TRUE(table_->find("eth0", "198.51.100.51/24"));
}

TEST_F(VipResourceTest, StopSucceedsWhenTheInterfaceIsGoneOrTheAddressRaced) {
  auto r = make(vip("198.51.100.50/24"));
  ASSERT_TRUE(run(&Resource::start, *r));
  // Removed between the dump and the delete: EADDRNOTAVAIL is success.
  table_->after_dump = [&] { table_->drop("198.51.100.50/24"); };
  EXPECT_TRUE(run(&Resource::stop, *r));
  table_->removeInterface("eth0");
  EXPECT_TRUE(run(&Resource::stop, *r));
}

TEST_F(VipResourceTest, StopReportsARealFailure) {
  auto r = make(vip("198.51.100.50/24"));
  ASSERT_TRUE(run(&Resource::start, *r));
  table_->fail_remove =
      Error{ErrorCode::kPermissionDenied, "cannot remove: Operation not permitted"};
  auto res = run(&Resource::stop, *r);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kPermissionDenied);
}

TEST_F(VipResourceTest, MonitorRestoresAnAddressRemovedBehindTandemsBackAndLogsIt) {
  auto r = make(vip("198.51.100.50/24", "eth0", "eth0:web"));
  ASSERT_TRUE(run(&Resource::start, *r));
  ASSERT_TRUE(run(&Resource::monitor, *r));
  EXPECT_EQ(table_->adds, 1);  // in place: monitor only reads

  table_->drop("198.51.100.50/24");
  ASSERT_TRUE(run(&Resource::monitor, *r));
  EXPECT_EQ(table_->adds, 2);
  EXPECT_EQ(table_->find("eth0", "198.51.100.50/24")->label, "eth0:web");
  EXPECT_EQ(logged(LogLevel::kWarning,
                   "VIP 198.51.100.50/24 on eth0 was removed behind tandem's back; restored"),
            1u)
      << allLines();
}

// What the notify hooks are told: a VIP taken (added or adopted) or let go, once per change;
// a start that changes nothing, a monitor's restore and a stop of nothing tell nothing.
TEST_F(VipResourceTest, EachTakeAndLetGoIsToldOnceAndNothingElse) {
  std::vector<std::string> told;
  auto make_told = [&](config::Vip v) {
    return std::make_unique<VipResource>(
        std::move(v), table_, nullptr, [&](const config::Vip& changed, bool added) {
          told.push_back(changed.address.toString() + (added ? " added" : " removed"));
        });
  };
  auto r = make_told(vip("198.51.100.50/24"));
  ASSERT_TRUE(run(&Resource::stop, *r));
  EXPECT_TRUE(told.empty()) << "nothing held, nothing there: nothing let go";
  ASSERT_TRUE(run(&Resource::start, *r));
  ASSERT_TRUE(run(&Resource::start, *r));
  table_->drop("198.51.100.50/24");
  ASSERT_TRUE(run(&Resource::monitor, *r));
  ASSERT_TRUE(run(&Resource::stop, *r));
  ASSERT_TRUE(run(&Resource::stop, *r));
  EXPECT_EQ(told, (std::vector<std::string>{"198.51.100.50/24 added", "198.51.100.50/24 removed"}));

  // A restarted daemon: adopting is taking, and an orphan it removes is let go.
  told.clear();
  table_->put("eth0", "198.51.100.51/24");
  auto adopted = make_told(vip("198.51.100.51/24"));
  ASSERT_TRUE(run(&Resource::start, *adopted));
  table_->put("eth0", "198.51.100.52/24");
  auto orphan = make_told(vip("198.51.100.52/24"));
  ASSERT_TRUE(run(&Resource::stop, *orphan));
  EXPECT_EQ(told, (std::vector<std::string>{"198.51.100.51/24 added", "198.51.100.52/24 removed"}));
}

TEST_F(VipResourceTest, MonitorOfAVipNotHeldWritesNothing) {
  auto r = make(vip("198.51.100.50/24"));
  ASSERT_TRUE(run(&Resource::monitor, *r));
  ASSERT_TRUE(run(&Resource::start, *r));
  ASSERT_TRUE(run(&Resource::stop, *r));
  ASSERT_TRUE(run(&Resource::monitor, *r));
  EXPECT_EQ(table_->adds, 1);
  EXPECT_TRUE(table_->entries().empty());
}

TEST_F(VipResourceTest, MonitorFailsWhenTheInterfaceVanishesOrTheAddressMoved) {
  auto r = make(vip("198.51.100.50/24"));
  ASSERT_TRUE(run(&Resource::start, *r));
  table_->drop("198.51.100.50/24");
  table_->put("eth1", "198.51.100.50/24");
  auto moved = run(&Resource::monitor, *r);
  ASSERT_FALSE(moved);
  EXPECT_EQ(moved.error().code, ErrorCode::kAlreadyExists);

  table_->removeInterface("eth0");
  auto gone = run(&Resource::monitor, *r);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
}

TEST(PlanVip, EachCase) {
  using K = VipPlan::Kind;
  auto entry = [](uint32_t idx, const char* p, uint32_t flags = 0) {
    rtnl::AddressEntry e;
    e.ifindex = idx;
    e.prefix = *IpPrefix::parse(p);
    e.flags = flags;
    return e;
  };
  const config::Vip v = vip("198.51.100.50/24");
  EXPECT_EQ(planVip(v, 2, {}).kind, K::kAdd);
  EXPECT_EQ(planVip(v, 2, {entry(2, "198.51.100.51/24"), entry(2, "203.0.113.50/24")}).kind,
            K::kAdd);
  EXPECT_EQ(planVip(v, 2, {entry(2, "198.51.100.50/24")}).kind, K::kAdopt);
  EXPECT_EQ(planVip(v, 2, {entry(2, "198.51.100.50/32")}).kind, K::kReplace);
  EXPECT_EQ(planVip(v, 2, {entry(3, "198.51.100.50/24")}).kind, K::kConflict);
  // Here beats elsewhere; the configured prefix beats another one.
  EXPECT_EQ(planVip(v, 2, {entry(3, "198.51.100.50/24"), entry(2, "198.51.100.50/24")}).kind,
            K::kAdopt);
  EXPECT_EQ(planVip(v, 2, {entry(2, "198.51.100.50/32"), entry(2, "198.51.100.50/24")}).kind,
            K::kAdopt);
  const config::Vip v6 = vip("2001:db8::50/64");
  EXPECT_EQ(planVip(v6, 2, {entry(2, "2001:db8::50/64", IFA_F_NODAD)}).kind, K::kAdopt);
  EXPECT_EQ(planVip(v6, 2, {entry(2, "2001:db8::50/64", IFA_F_DADFAILED)}).kind, K::kReplace);
}

// The chain drives VIPs as the election would, on simulated time: start in order, a monitor
// round repairs, stop in reverse.
TEST_F(VipResourceTest, ChainStartsMonitorsAndStopsVips) {
  fakes::SimDispatcher sim;
  std::vector<std::unique_ptr<Resource>> list;
  list.push_back(make(vip("198.51.100.50/24", "eth0", "eth0:web")));
  list.push_back(make(vip("2001:db8::50/64", "eth1")));
  ResourceChain chain(sim, std::move(list));
  std::vector<bool> results;
  auto record = [&](Result<void> r) { results.push_back(r.has_value()); };

  chain.startAll(record);
  sim.advance(0ms);
  EXPECT_TRUE(table_->find("eth0", "198.51.100.50/24"));
  EXPECT_TRUE(table_->find("eth1", "2001:db8::50/64"));
  EXPECT_TRUE(chain.anyPresent());

  table_->drop("2001:db8::50/64");
  sim.advance(2s);
  chain.monitorAll(record);
  sim.advance(0ms);
  EXPECT_TRUE(table_->find("eth1", "2001:db8::50/64"));
  EXPECT_EQ(logged(LogLevel::kWarning,
                   "VIP 2001:db8::50/64 on eth1 was removed behind tandem's back; restored"),
            1u)
      << allLines();

  chain.stopAll(record);
  sim.advance(0ms);
  EXPECT_TRUE(table_->entries().empty());
  EXPECT_FALSE(chain.anyPresent());
  EXPECT_EQ(results, (std::vector<bool>{true, true, true}));
}

config::Config twoNodes() {
  config::Config cfg;
  cfg.source = "tandem.conf";
  config::Node a;
  a.name = "a";
  a.interfaces = {"eth0", "eth1"};
  config::Node b;
  b.name = "b";
  b.interfaces = {"eth1"};
  cfg.nodes = {a, b};
  cfg.vips = {vip("198.51.100.50/24", "eth0", "eth0:web"), vip("203.0.113.10/24", "eth1"),
              vip("2001:db8::50/64", "eth1")};
  return cfg;
}

TEST(MakeVipResources, OneResourcePerVipOnThisNodesInterfacesInConfigOrder) {
  auto table = std::make_shared<fakes::FakeAddressTable>();
  int opened = 0;
  AddressTableFactory open = [&]() -> Result<std::shared_ptr<AddressTable>> {
    ++opened;
    return std::shared_ptr<AddressTable>(table);
  };
  std::vector<std::string> lines;
  VipLog log = [&](LogLevel, const std::string& l) { lines.push_back(l); };

  auto a = makeVipResources(twoNodes(), "a", open, log);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ((*a)[0]->name(), "vip 198.51.100.50/24");
  EXPECT_EQ((*a)[1]->name(), "vip 203.0.113.10/24");
  EXPECT_EQ((*a)[2]->name(), "vip 2001:db8::50/64");
  EXPECT_EQ(opened, 1);

  auto b = makeVipResources(twoNodes(), "b", open, log);
  ASSERT_TRUE(b);
  ASSERT_EQ(b->size(), 2u);
  EXPECT_EQ((*b)[0]->name(), "vip 203.0.113.10/24");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("node.interfaces does not list eth0"), std::string::npos) << lines[0];
}

TEST(MakeVipResources, OpensNothingWithoutVipsAndReportsErrors) {
  int opened = 0;
  AddressTableFactory open = [&]() -> Result<std::shared_ptr<AddressTable>> {
    ++opened;
    return fail(ErrorCode::kPermissionDenied, "cannot open a NETLINK_ROUTE socket");
  };
  config::Config cfg = twoNodes();
  cfg.vips.clear();
  auto none = makeVipResources(cfg, "a", open, nullptr);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(opened, 0);

  auto cannot = makeVipResources(twoNodes(), "a", open, nullptr);
  ASSERT_FALSE(cannot);
  EXPECT_EQ(cannot.error().message, "cannot open a NETLINK_ROUTE socket");

  auto stranger = makeVipResources(twoNodes(), "zz", open, nullptr);
  ASSERT_FALSE(stranger);
  EXPECT_EQ(stranger.error().code, ErrorCode::kNotFound);

  cfg = twoNodes();
  cfg.vips[0].label = "eth1:web";
  auto label = makeVipResources(cfg, "a", open, nullptr);
  ASSERT_FALSE(label);
  EXPECT_EQ(label.error().message,
            "VIP 198.51.100.50/24: label \"eth1:web\" must start with its interface name "
            "\"eth0\", e.g. \"eth0:web\"");
}

}  // namespace
}  // namespace tandem::resources
