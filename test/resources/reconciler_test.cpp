#include "ipvs/reconciler.h"

#include <gtest/gtest.h>
#include <netinet/in.h>

#include "fakes/sim_dispatcher.h"
#include "ipvs/ipvs_plan.h"
#include "resources/fake_ipvs_kernel.h"

namespace tandem::resources::ipvs {
namespace {

using namespace std::chrono_literals;
using Kind = Op::Kind;

Endpoint ep(const char* text) { return *Endpoint::parse(text, false); }

struct Logged {
  IpvsLogLevel level;
  std::string text;
};

class Log {
 public:
  IpvsLog sink() {
    return [this](IpvsLogLevel l, const std::string& t) { lines.push_back({l, t}); };
  }
  size_t count(IpvsLogLevel level, const std::string& text) const {
    size_t n = 0;
    for (const auto& l : lines) n += l.level == level && l.text.find(text) != std::string::npos;
    return n;
  }
  std::vector<Logged> lines;
};

config::RealServer real(const char* address, int weight) {
  config::RealServer rs;
  rs.address = ep(address);
  rs.weight = weight;
  return rs;
}

config::Config twoServices() {
  config::Config cfg;
  config::VirtualServer web;
  web.name = "web";
  web.address = ep("198.51.100.10:80");
  web.real_servers = {real("198.51.100.21:80", 3), real("198.51.100.22:80", 5)};
  config::VirtualServer dns;
  dns.name = "dns";
  dns.address = ep("198.51.100.11:53");
  dns.protocol = config::Protocol::kUdp;
  dns.scheduler = "rr";
  dns.real_servers = {real("198.51.100.31:53", 1)};
  cfg.virtual_servers = {web, dns};
  cfg.ipvs.monitor_interval = 5000ms;
  return cfg;
}

Service serviceOf(const ServiceKey& key) {
  Service s;
  s.key = key;
  return s;
}

ServiceKey webKey() { return desiredService(twoServices().virtual_servers[0]).key; }
DestKey destKey(const char* address) { return DestKey{ep(address).address, ep(address).port}; }

class ReconcilerTest : public ::testing::Test {
 protected:
  Table desired(const Health& h = Health{}) { return desiredTable(cfg_, h); }

  config::Config cfg_ = twoServices();
  fakes::FakeIpvsKernel kernel_;
  Log log_;
  Reconciler rec_{kernel_, log_.sink()};
};

TEST_F(ReconcilerTest, EmptyKernelGetsTheWholeTable) {
  auto r = rec_.reconcile(desired(), false);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->applied, 5u);
  EXPECT_EQ(kernel_.writes(), 5u);
  EXPECT_TRUE(plan(desired(), kernel_.table(), true).empty());
  EXPECT_EQ(log_.count(IpvsLogLevel::kNotice, "add virtual service tcp 198.51.100.10:80"), 1u);
  EXPECT_EQ(log_.count(IpvsLogLevel::kNotice,
                       "add real server 198.51.100.22:80 of tcp "
                       "198.51.100.10:80 weight=5"),
            1u);
}

TEST_F(ReconcilerTest, NoOpReapplyWritesNothing) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  const auto before = kernel_.writes();
  const auto lines = log_.lines.size();
  for (int i = 0; i < 3; ++i) {
    auto r = rec_.reconcile(desired(), false);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->applied, 0u);
    EXPECT_EQ(r->drift, 0u);
  }
  EXPECT_EQ(kernel_.writes(), before);
  EXPECT_EQ(kernel_.requests(), before) << "not even a failed request";
  EXPECT_EQ(log_.lines.size(), lines) << "a quiet pass logs nothing";
}

TEST_F(ReconcilerTest, OneWeightChangeIsOneWrite) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  const auto before = kernel_.writes();
  Health h;
  h.set("web", ep("198.51.100.22:80"), false);
  auto r = rec_.reconcile(desired(h), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(kernel_.writes() - before, 1u);
  EXPECT_EQ(kernel_.applied().back().kind, Kind::kEditDest);
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.22:80"))->weight, 0);
  EXPECT_EQ(log_.count(IpvsLogLevel::kNotice,
                       "edit real server 198.51.100.22:80 of tcp "
                       "198.51.100.10:80 weight=0"),
            1u);
}

TEST_F(ReconcilerTest, DeletedServiceIsRestoredAndLoggedAsDrift) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  ASSERT_FALSE(kernel_.hasService(webKey()));
  auto r = rec_.reconcile(desired(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->drift, 1u);
  EXPECT_TRUE(kernel_.hasService(webKey()));
  EXPECT_TRUE(plan(desired(), kernel_.table(), true).empty());
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning,
                       "virtual service tcp 198.51.100.10:80 was deleted behind tandem's back "
                       "(ipvsadm -D?); restored"),
            1u);
}

TEST_F(ReconcilerTest, DestinationDriftIsRepairedAndNamed) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  Service web = kernel_.table().services.back().service;  // reverse order: web is last
  ASSERT_EQ(web.key, webKey());
  Destination d = *kernel_.dest(webKey(), destKey("198.51.100.21:80"));
  d.weight = 100;
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kEditDest, web, d}));
  Destination stranger = d;
  stranger.key = destKey("203.0.113.50:80");
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kAddDest, web, stranger}));
  ASSERT_TRUE(kernel_.applyDirect(
      Op{Kind::kDelDest, web, *kernel_.dest(webKey(), destKey("198.51.100.22:80"))}));

  const auto before = kernel_.writes();
  auto r = rec_.reconcile(desired(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->drift, 3u);
  EXPECT_EQ(kernel_.writes() - before, 3u);
  EXPECT_TRUE(plan(desired(), kernel_.table(), true).empty());
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "(ipvsadm -e?)"), 1u);
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "(ipvsadm -a?)"), 1u);
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "(ipvsadm -d?)"), 1u);
}

TEST_F(ReconcilerTest, ServicesTandemDoesNotOwnAreLeftAlone) {
  Service theirs;
  theirs.key = webKey();
  theirs.key.port = 25;
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kAddService, theirs, std::nullopt}));
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  EXPECT_TRUE(kernel_.hasService(theirs.key));
  ASSERT_TRUE(rec_.reconcile(desired(), true));
  EXPECT_FALSE(kernel_.hasService(theirs.key)) << "manage = \"all\" removes it";
}

TEST_F(ReconcilerTest, ServiceDroppedFromTheConfigIsDeletedEvenWhenOwnedOnly) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  cfg_.virtual_servers.pop_back();  // dns
  auto r = rec_.reconcile(desired(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied, 1u);
  EXPECT_EQ(kernel_.applied().back().kind, Kind::kDelService);
  EXPECT_EQ(kernel_.table().services.size(), 1u);
  EXPECT_EQ(rec_.owned().size(), 1u);
  EXPECT_EQ(r->drift, 0u) << "a config change is not drift";
}

TEST_F(ReconcilerTest, ServiceGoneFromKernelAndConfigIsNotDrift) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  cfg_.virtual_servers.erase(cfg_.virtual_servers.begin());  // web leaves the config too
  auto r = rec_.reconcile(desired(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->drift, 0u);
  EXPECT_EQ(r->applied, 0u);
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "behind tandem's back"), 0u);
  EXPECT_FALSE(kernel_.hasService(webKey()));
}

TEST_F(ReconcilerTest, UnrepairableDriftSaysSo) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  kernel_.injectErrors({ErrorCode::kPermissionDenied});
  ASSERT_FALSE(rec_.reconcile(desired(), false));
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "(ipvsadm -D?); could not restore it"), 1u);
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "; restored"), 0u);
}

TEST_F(ReconcilerTest, BigPassIsLoggedAsCounts) {
  config::VirtualServer& web = cfg_.virtual_servers[0];
  for (int i = 0; i < 30; ++i) {
    web.real_servers.push_back(real(("203.0.113." + std::to_string(100 + i) + ":80").c_str(), 1));
  }
  auto r = rec_.reconcile(desired(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied, 35u);
  EXPECT_EQ(log_.lines.size(), 1u);
  EXPECT_EQ(log_.count(IpvsLogLevel::kNotice,
                       "applied 35 IPVS changes: services +2 ~0 -0, real servers +33 ~0 -0"),
            1u);
}

TEST_F(ReconcilerTest, ExistsRaceIsReplanned) {
  // Between tandem's dump and its first add, someone adds the same service.
  kernel_.beforeNextApply([&](fakes::FakeIpvsKernel& k) {
    Service s = desired().services[0].service;
    ASSERT_TRUE(k.applyDirect(Op{Kind::kAddService, s, std::nullopt}));
  });
  auto r = rec_.reconcile(desired(), false);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->replans, 1u);
  EXPECT_TRUE(plan(desired(), kernel_.table(), true).empty());
  EXPECT_EQ(kernel_.dumps(), 2u);
}

TEST_F(ReconcilerTest, NotFoundRaceIsReplanned) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  // tandem goes to edit a weight; someone deletes the whole service first.
  kernel_.beforeNextApply([&](fakes::FakeIpvsKernel& k) {
    ASSERT_TRUE(k.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  });
  auto r = rec_.reconcile(desired(h), false);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->replans, 1u);
  EXPECT_TRUE(plan(desired(h), kernel_.table(), true).empty());
}

TEST_F(ReconcilerTest, ReplansAreBounded) {
  kernel_.injectErrors(std::vector<ErrorCode>(10, ErrorCode::kAlreadyExists));
  auto r = rec_.reconcile(desired(), false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(r.error().message.find("kept changing"), std::string::npos) << r.error().message;
  EXPECT_EQ(kernel_.requests(), size_t{Reconciler::kMaxReplans} + 1);
  EXPECT_EQ(kernel_.dumps(), size_t{Reconciler::kMaxReplans} + 1);
}

TEST_F(ReconcilerTest, OtherErrorsFailAtOnceNamingTheRequest) {
  kernel_.injectErrors({ErrorCode::kPermissionDenied});
  auto r = rec_.reconcile(desired(), false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(r.error().message.find("add virtual service tcp 198.51.100.10:80"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(kernel_.dumps(), 1u);
}

TEST_F(ReconcilerTest, DumpFailureIsAnError) {
  kernel_.failDumps(1);
  auto r = rec_.reconcile(desired(), false);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cannot read the IPVS table"), std::string::npos);
  EXPECT_EQ(kernel_.writes(), 0u);
}

TEST_F(ReconcilerTest, HalfAppliedPassIsFinishedNextTimeWithoutFalseDrift) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  h.set("web", ep("198.51.100.22:80"), false);
  kernel_.failRequestAfter(1, ErrorCode::kPermissionDenied);  // first edit in, second refused
  const auto before = kernel_.writes();
  ASSERT_FALSE(rec_.reconcile(desired(h), false));
  EXPECT_EQ(kernel_.writes() - before, 1u);
  EXPECT_EQ(log_.count(IpvsLogLevel::kNotice, "edit real server"), 1u) << "what went in is logged";
  auto r = rec_.reconcile(desired(h), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied, 1u);
  EXPECT_EQ(r->drift, 0u) << "tandem's own half-applied pass is not someone else's doing";
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "behind tandem's back"), 0u);
  EXPECT_TRUE(plan(desired(h), kernel_.table(), true).empty());
}

TEST_F(ReconcilerTest, TimeoutsAreSetOnlyWhenTheyDiffer) {
  ASSERT_TRUE(rec_.applyTimeouts(Timeouts{}));
  EXPECT_EQ(kernel_.writes(), 0u);
  ASSERT_TRUE(rec_.applyTimeouts(Timeouts{900, 0, 0}));  // the kernel's default already
  EXPECT_EQ(kernel_.writes(), 0u);
  ASSERT_TRUE(rec_.applyTimeouts(Timeouts{600, 0, 60}));
  EXPECT_EQ(kernel_.writes(), 1u);
  EXPECT_EQ(*kernel_.timeouts(), (Timeouts{600, 120, 60}));
  ASSERT_TRUE(rec_.applyTimeouts(Timeouts{600, 0, 60}));
  EXPECT_EQ(kernel_.writes(), 1u);
}

// kChange: planned against the table the last complete pass left, no dump.
TEST_F(ReconcilerTest, ChangePassAfterACompletePassReadsNothingAndWritesOnlyTheChanges) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  const auto dumps = kernel_.dumps();
  const auto writes = kernel_.writes();
  cfg_.virtual_servers[0].real_servers[0].weight = 9;                          // edit
  cfg_.virtual_servers[0].real_servers.push_back(real("203.0.113.23:80", 1));  // add
  cfg_.virtual_servers.pop_back();                                             // delete dns
  auto r = rec_.reconcile(desired(), false, Pass::kChange);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(kernel_.dumps() - dumps, 0u);
  EXPECT_EQ(r->dumps, 0u);
  EXPECT_EQ(kernel_.writes() - writes, 3u);
  EXPECT_EQ(kernel_.requests(), kernel_.writes()) << "no refused request either";
  EXPECT_EQ(r->applied, 3u);
  EXPECT_TRUE(plan(desired(), kernel_.table(), true).empty());
  // The next change is planned against this one's result.
  cfg_.virtual_servers[0].real_servers[0].weight = 2;
  r = rec_.reconcile(desired(), false, Pass::kChange);
  ASSERT_TRUE(r);
  EXPECT_EQ(kernel_.dumps() - dumps, 0u);
  EXPECT_EQ(kernel_.writes() - writes, 4u);
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.21:80"))->weight, 2);
}

TEST_F(ReconcilerTest, VerifyPassDumps) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  const auto dumps = kernel_.dumps();
  auto r = rec_.reconcile(desired(), false, Pass::kVerify);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dumps, 1u);
  EXPECT_EQ(kernel_.dumps() - dumps, 1u);
}

TEST_F(ReconcilerTest, ChangePassWithoutAnAppliedTableDumps) {
  auto r = rec_.reconcile(desired(), false, Pass::kChange);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dumps, 1u);
  EXPECT_EQ(kernel_.writes(), 5u);
  // After a failed pass the kernel holds neither table: dump again.
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  kernel_.injectErrors({ErrorCode::kPermissionDenied});
  ASSERT_FALSE(rec_.reconcile(desired(h), false, Pass::kChange));
  const auto dumps = kernel_.dumps();
  r = rec_.reconcile(desired(h), false, Pass::kChange);
  ASSERT_TRUE(r);
  EXPECT_EQ(kernel_.dumps() - dumps, 1u);
  EXPECT_TRUE(plan(desired(h), kernel_.table(), true).empty());
}

TEST_F(ReconcilerTest, NotFoundDuringAChangePassRedumpsAndRepairs) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  // Someone deletes web; tandem, not having dumped since, goes to edit one of its weights.
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  const auto dumps = kernel_.dumps();
  auto r = rec_.reconcile(desired(h), false, Pass::kChange);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->replans, 1u);
  EXPECT_EQ(r->dumps, 1u);
  EXPECT_EQ(kernel_.dumps() - dumps, 1u);
  EXPECT_EQ(r->drift, 1u);
  EXPECT_TRUE(plan(desired(h), kernel_.table(), true).empty());
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.21:80"))->weight, 0);
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning,
                       "virtual service tcp 198.51.100.10:80 was deleted behind tandem's back "
                       "(ipvsadm -D?); restored"),
            1u);
}

TEST_F(ReconcilerTest, ChangesMadeBeforeTheKernelMovedAreNotDrift) {
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  // dns's weight goes in, then web's edit finds web gone: only web's loss is drift.
  Health h;
  h.set("dns", ep("198.51.100.31:53"), false);
  h.set("web", ep("198.51.100.21:80"), false);
  kernel_.failRequestAfter(1, ErrorCode::kNotFound);
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  auto r = rec_.reconcile(desired(h), false, Pass::kChange);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->drift, 1u);
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "behind tandem's back"), 1u);
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "tcp 198.51.100.10:80 was deleted"), 1u);
  EXPECT_TRUE(plan(desired(h), kernel_.table(), true).empty());
}

TEST_F(ReconcilerTest, ChangePassWithANewManageDumps) {
  Service theirs;
  theirs.key = webKey();
  theirs.key.port = 25;
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kAddService, theirs, std::nullopt}));
  ASSERT_TRUE(rec_.reconcile(desired(), false));
  auto r = rec_.reconcile(desired(), true, Pass::kChange);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dumps, 1u);
  EXPECT_FALSE(kernel_.hasService(theirs.key)) << "manage = \"all\" removes it at once";
}

TEST(IpvsNames, ServiceAndDestinationText) {
  ServiceKey k;
  k.family = Family::kInet6;
  k.protocol = IPPROTO_UDP;
  k.address = *IpAddress::parse("2001:db8::10");
  k.port = 53;
  EXPECT_EQ(serviceName(k), "udp [2001:db8::10]:53");
  ServiceKey m;
  m.fwmark = 7;
  EXPECT_EQ(serviceName(m), "fwmark 7 (IPv4)");
  EXPECT_EQ(destName(destKey("198.51.100.21:80")), "198.51.100.21:80");
}

// The loop on simulated time.
class ReconcileLoopTest : public ::testing::Test {
 protected:
  fakes::SimDispatcher dispatcher_;
  fakes::FakeIpvsKernel kernel_;
  Log log_;
  config::Config cfg_ = twoServices();
};

TEST_F(ReconcileLoopTest, ConfigureAppliesAtOnceThenEveryInterval) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  EXPECT_EQ(loop.passes(), 1u);
  EXPECT_EQ(kernel_.writes(), 5u);
  dispatcher_.advance(4999ms);
  EXPECT_EQ(loop.passes(), 1u);
  dispatcher_.advance(1ms);
  EXPECT_EQ(loop.passes(), 2u);
  dispatcher_.advance(50s);
  EXPECT_EQ(loop.passes(), 12u);
  EXPECT_EQ(kernel_.writes(), 5u) << "steady state writes nothing";
  loop.stop();
}

TEST_F(ReconcileLoopTest, IpvsadmDeleteIsRepairedWithinOneMonitorInterval) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  dispatcher_.advance(1234ms);
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  dispatcher_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_TRUE(kernel_.hasService(webKey()));
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "deleted behind tandem's back"), 1u);
  loop.stop();
}

TEST_F(ReconcileLoopTest, HealthChangeAppliesAtOnceWithOneWrite) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  const auto before = kernel_.writes();
  loop.setHealth("web", ep("198.51.100.21:80"), false);
  EXPECT_EQ(kernel_.writes() - before, 1u);
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.21:80"))->weight, 0);
  loop.setHealth("web", ep("198.51.100.21:80"), false);   // no change: no pass
  loop.setHealth("nope", ep("198.51.100.21:80"), false);  // no such service: no pass
  EXPECT_EQ(loop.passes(), 2u);
  loop.setHealth("web", ep("198.51.100.21:80"), true);
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.21:80"))->weight, 3);
  EXPECT_EQ(kernel_.writes() - before, 2u);
  // Health passes leave the interval running: the monitor pass comes 5 s after configure().
  dispatcher_.advance(4999ms);
  EXPECT_EQ(loop.passes(), 3u);
  dispatcher_.advance(1ms);
  EXPECT_EQ(loop.passes(), 4u);
  loop.stop();
}

TEST_F(ReconcileLoopTest, ReloadAppliesTheNewConfig) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  cfg_.virtual_servers[0].real_servers[0].weight = 7;
  cfg_.ipvs.monitor_interval = 1000ms;
  const auto before = kernel_.writes();
  loop.configure(cfg_);
  EXPECT_EQ(kernel_.writes() - before, 1u);
  dispatcher_.advance(1000ms);
  EXPECT_EQ(loop.passes(), 3u) << "the new interval holds";
  loop.stop();
}

TEST_F(ReconcileLoopTest, FailureIsLoggedOnceAndRetriedEachInterval) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  kernel_.failDumps(3);
  loop.configure(cfg_);
  EXPECT_FALSE(loop.lastPassOk());
  dispatcher_.advance(10s);
  EXPECT_EQ(log_.count(IpvsLogLevel::kError, "IPVS table not in sync"), 1u);
  EXPECT_EQ(kernel_.writes(), 0u);
  dispatcher_.advance(5s);  // the fourth pass reads the table
  EXPECT_TRUE(loop.lastPassOk());
  EXPECT_EQ(kernel_.writes(), 5u);
  EXPECT_EQ(log_.count(IpvsLogLevel::kNotice, "in sync again"), 1u);
  loop.stop();
}

TEST_F(ReconcileLoopTest, TimeoutsFromTheConfig) {
  cfg_.ipvs.tcp_timeout = 600s;
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  EXPECT_EQ(kernel_.timeouts()->tcp, 600u);
  EXPECT_EQ(kernel_.writes(), 6u);
  dispatcher_.advance(5s);
  EXPECT_EQ(kernel_.writes(), 6u);
  loop.stop();
}

TEST_F(ReconcileLoopTest, ReloadAndHealthChangesDoNotDumpTheMonitorPassDoes) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  EXPECT_EQ(kernel_.dumps(), 1u);
  const auto writes = kernel_.writes();
  cfg_.virtual_servers[0].real_servers[1].weight = 8;
  loop.configure(cfg_);
  EXPECT_EQ(kernel_.dumps(), 1u) << "a reload plans against the table the last pass left";
  EXPECT_EQ(kernel_.writes() - writes, 1u);
  loop.setHealth("web", ep("198.51.100.21:80"), false);
  EXPECT_EQ(kernel_.dumps(), 1u) << "so does a health change";
  EXPECT_EQ(kernel_.writes() - writes, 2u);
  dispatcher_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_EQ(kernel_.dumps(), 2u) << "the monitor pass reads the kernel";
  EXPECT_EQ(kernel_.writes() - writes, 2u);
  loop.stop();
}

TEST_F(ReconcileLoopTest, ReloadWithANewIntervalVerifies) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  cfg_.ipvs.monitor_interval = 1000ms;
  loop.configure(cfg_);
  EXPECT_EQ(kernel_.dumps(), 2u);
  loop.stop();
}

TEST_F(ReconcileLoopTest, FrequentHealthChangesDoNotPostponeTheMonitorPass) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  dispatcher_.advance(500ms);
  ASSERT_TRUE(kernel_.applyDirect(
      Op{Kind::kDelService, serviceOf(desiredService(cfg_.virtual_servers[1]).key), std::nullopt}));
  // web's first server flaps every 0.9 s: each flap is a (kChange) pass of its own, and none
  // may restart the interval, or the kernel would never be read again.
  for (int i = 0; i < 5; ++i) {
    dispatcher_.advance(900ms);
    loop.setHealth("web", ep("198.51.100.21:80"), i % 2 == 1);
  }
  EXPECT_TRUE(kernel_.hasService(desiredService(cfg_.virtual_servers[1]).key))
      << "dns, deleted at 0.5 s, is restored by the monitor pass at 5 s";
  EXPECT_EQ(log_.count(IpvsLogLevel::kWarning, "udp 198.51.100.11:53 was deleted"), 1u);
  loop.stop();
}

}  // namespace
}  // namespace tandem::resources::ipvs
