#include "ipvs/reconciler.h"

#include <gtest/gtest.h>
#include <netinet/in.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "fakes/sim_dispatcher.h"
#include "ipvs/ipvs_plan.h"
#include "resources/fake_ipvs_kernel.h"
#include "resources/run_pass.h"

namespace tandem::resources::ipvs {
namespace {

using namespace std::chrono_literals;
using Kind = Op::Kind;

Endpoint ep(const char* text) { return *Endpoint::parse(text, false); }

struct Logged {
  LogLevel level;
  std::string text;
};

class Log {
 public:
  IpvsLog sink() {
    return [this](LogLevel l, const std::string& t) { lines.push_back({l, t}); };
  }
  size_t count(LogLevel level, const std::string& text) const {
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
  Result<ReconcileReport> reconcile(const Table& d, bool manage_all, Pass pass = Pass::kVerify) {
    return fakes::runPass(sim_, rec_, d, manage_all, pass);
  }
  Result<void> applyTimeouts(const Timeouts& want) { return fakes::runTimeouts(sim_, rec_, want); }

  config::Config cfg_ = twoServices();
  fakes::SimDispatcher sim_;
  fakes::FakeIpvsKernel kernel_{sim_};
  Log log_;
  Reconciler rec_{sim_, kernel_, log_.sink()};
};

TEST_F(ReconcilerTest, EmptyKernelGetsTheWholeTable) {
  auto r = reconcile(desired(), false);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->applied, 5u);
  EXPECT_EQ(kernel_.writes(), 5u);
  EXPECT_TRUE(plan(desired(), kernel_.table(), true).empty());
  EXPECT_EQ(log_.count(LogLevel::kNotice, "add virtual service tcp 198.51.100.10:80"), 1u);
  EXPECT_EQ(log_.count(LogLevel::kNotice,
                       "add real server 198.51.100.22:80 of tcp "
                       "198.51.100.10:80 weight=5"),
            1u);
}

TEST_F(ReconcilerTest, NoOpReapplyWritesNothing) {
  ASSERT_TRUE(reconcile(desired(), false));
  const auto before = kernel_.writes();
  const auto lines = log_.lines.size();
  for (int i = 0; i < 3; ++i) {
    auto r = reconcile(desired(), false);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->applied, 0u);
    EXPECT_EQ(r->drift, 0u);
  }
  EXPECT_EQ(kernel_.writes(), before);
  EXPECT_EQ(kernel_.requests(), before) << "not even a failed request";
  EXPECT_EQ(log_.lines.size(), lines) << "a quiet pass logs nothing";
}

TEST_F(ReconcilerTest, OneWeightChangeIsOneWrite) {
  ASSERT_TRUE(reconcile(desired(), false));
  const auto before = kernel_.writes();
  Health h;
  h.set("web", ep("198.51.100.22:80"), false);
  auto r = reconcile(desired(h), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(kernel_.writes() - before, 1u);
  EXPECT_EQ(kernel_.applied().back().kind, Kind::kEditDest);
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.22:80"))->weight, 0);
  EXPECT_EQ(log_.count(LogLevel::kNotice,
                       "edit real server 198.51.100.22:80 of tcp "
                       "198.51.100.10:80 weight=0"),
            1u);
}

TEST_F(ReconcilerTest, DeletedServiceIsRestoredAndLoggedAsDrift) {
  ASSERT_TRUE(reconcile(desired(), false));
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  ASSERT_FALSE(kernel_.hasService(webKey()));
  auto r = reconcile(desired(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->drift, 1u);
  EXPECT_TRUE(kernel_.hasService(webKey()));
  EXPECT_TRUE(plan(desired(), kernel_.table(), true).empty());
  EXPECT_EQ(log_.count(LogLevel::kWarning,
                       "virtual service tcp 198.51.100.10:80 was deleted behind tandem's back "
                       "(ipvsadm -D?); restored"),
            1u);
}

TEST_F(ReconcilerTest, DestinationDriftIsRepairedAndNamed) {
  ASSERT_TRUE(reconcile(desired(), false));
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
  auto r = reconcile(desired(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->drift, 3u);
  EXPECT_EQ(kernel_.writes() - before, 3u);
  EXPECT_TRUE(plan(desired(), kernel_.table(), true).empty());
  EXPECT_EQ(log_.count(LogLevel::kWarning, "(ipvsadm -e?)"), 1u);
  EXPECT_EQ(log_.count(LogLevel::kWarning, "(ipvsadm -a?)"), 1u);
  EXPECT_EQ(log_.count(LogLevel::kWarning, "(ipvsadm -d?)"), 1u);
}

TEST_F(ReconcilerTest, ServicesTandemDoesNotOwnAreLeftAlone) {
  Service theirs;
  theirs.key = webKey();
  theirs.key.port = 25;
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kAddService, theirs, std::nullopt}));
  ASSERT_TRUE(reconcile(desired(), false));
  EXPECT_TRUE(kernel_.hasService(theirs.key));
  ASSERT_TRUE(reconcile(desired(), true));
  EXPECT_FALSE(kernel_.hasService(theirs.key)) << "manage = \"all\" removes it";
}

TEST_F(ReconcilerTest, ServiceDroppedFromTheConfigIsDeletedEvenWhenOwnedOnly) {
  ASSERT_TRUE(reconcile(desired(), false));
  cfg_.virtual_servers.pop_back();  // dns
  auto r = reconcile(desired(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied, 1u);
  EXPECT_EQ(kernel_.applied().back().kind, Kind::kDelService);
  EXPECT_EQ(kernel_.table().services.size(), 1u);
  EXPECT_EQ(rec_.owned().size(), 1u);
  EXPECT_EQ(r->drift, 0u) << "a config change is not drift";
}

TEST_F(ReconcilerTest, ServiceGoneFromKernelAndConfigIsNotDrift) {
  ASSERT_TRUE(reconcile(desired(), false));
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  cfg_.virtual_servers.erase(cfg_.virtual_servers.begin());  // web leaves the config too
  auto r = reconcile(desired(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->drift, 0u);
  EXPECT_EQ(r->applied, 0u);
  EXPECT_EQ(log_.count(LogLevel::kWarning, "behind tandem's back"), 0u);
  EXPECT_FALSE(kernel_.hasService(webKey()));
}

TEST_F(ReconcilerTest, UnrepairableDriftSaysSo) {
  ASSERT_TRUE(reconcile(desired(), false));
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  kernel_.injectErrors({ErrorCode::kPermissionDenied});
  ASSERT_FALSE(reconcile(desired(), false));
  EXPECT_EQ(log_.count(LogLevel::kWarning, "(ipvsadm -D?); could not restore it"), 1u);
  EXPECT_EQ(log_.count(LogLevel::kWarning, "; restored"), 0u);
}

TEST_F(ReconcilerTest, BigPassIsLoggedAsCounts) {
  config::VirtualServer& web = cfg_.virtual_servers[0];
  for (int i = 0; i < 30; ++i) {
    web.real_servers.push_back(real(("203.0.113." + std::to_string(100 + i) + ":80").c_str(), 1));
  }
  auto r = reconcile(desired(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied, 35u);
  EXPECT_EQ(log_.lines.size(), 1u);
  EXPECT_EQ(log_.count(LogLevel::kNotice,
                       "applied 35 IPVS changes: services +2 ~0 -0, real servers +33 ~0 -0"),
            1u);
}

TEST_F(ReconcilerTest, ExistsRaceIsReplanned) {
  // Between tandem's dump and its first add, someone adds the same service.
  kernel_.beforeNextApply([&](fakes::FakeIpvsKernel& k) {
    Service s = desired().services[0].service;
    ASSERT_TRUE(k.applyDirect(Op{Kind::kAddService, s, std::nullopt}));
  });
  auto r = reconcile(desired(), false);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->replans, 1u);
  EXPECT_TRUE(plan(desired(), kernel_.table(), true).empty());
  EXPECT_EQ(kernel_.dumps(), 2u);
}

TEST_F(ReconcilerTest, NotFoundRaceIsReplanned) {
  ASSERT_TRUE(reconcile(desired(), false));
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  // tandem goes to edit a weight; someone deletes the whole service first.
  kernel_.beforeNextApply([&](fakes::FakeIpvsKernel& k) {
    ASSERT_TRUE(k.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  });
  auto r = reconcile(desired(h), false);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->replans, 1u);
  EXPECT_TRUE(plan(desired(h), kernel_.table(), true).empty());
}

TEST_F(ReconcilerTest, ReplansAreBounded) {
  kernel_.injectErrors(std::vector<ErrorCode>(10, ErrorCode::kAlreadyExists));
  auto r = reconcile(desired(), false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(r.error().message.find("kept changing"), std::string::npos) << r.error().message;
  EXPECT_EQ(kernel_.requests(), size_t{Reconciler::kMaxReplans} + 1);
  EXPECT_EQ(kernel_.dumps(), size_t{Reconciler::kMaxReplans} + 1);
}

TEST_F(ReconcilerTest, OtherErrorsFailAtOnceNamingTheRequest) {
  kernel_.injectErrors({ErrorCode::kPermissionDenied});
  auto r = reconcile(desired(), false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(r.error().message.find("add virtual service tcp 198.51.100.10:80"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(kernel_.dumps(), 1u);
}

TEST_F(ReconcilerTest, DumpFailureIsAnError) {
  kernel_.failDumps(1);
  auto r = reconcile(desired(), false);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cannot read the IPVS table"), std::string::npos);
  EXPECT_EQ(kernel_.writes(), 0u);
}

TEST_F(ReconcilerTest, HalfAppliedPassIsFinishedNextTimeWithoutFalseDrift) {
  ASSERT_TRUE(reconcile(desired(), false));
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  h.set("web", ep("198.51.100.22:80"), false);
  kernel_.failRequestAfter(1, ErrorCode::kPermissionDenied);  // first edit in, second refused
  const auto before = kernel_.writes();
  ASSERT_FALSE(reconcile(desired(h), false));
  EXPECT_EQ(kernel_.writes() - before, 1u);
  EXPECT_EQ(log_.count(LogLevel::kNotice, "edit real server"), 1u) << "what went in is logged";
  auto r = reconcile(desired(h), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied, 1u);
  EXPECT_EQ(r->drift, 0u) << "tandem's own half-applied pass is not someone else's doing";
  EXPECT_EQ(log_.count(LogLevel::kWarning, "behind tandem's back"), 0u);
  EXPECT_TRUE(plan(desired(h), kernel_.table(), true).empty());
}

TEST_F(ReconcilerTest, TimeoutsAreSetOnlyWhenTheyDiffer) {
  ASSERT_TRUE(applyTimeouts(Timeouts{}));
  EXPECT_EQ(kernel_.writes(), 0u);
  ASSERT_TRUE(applyTimeouts(Timeouts{900, 0, 0}));  // the kernel's default already
  EXPECT_EQ(kernel_.writes(), 0u);
  ASSERT_TRUE(applyTimeouts(Timeouts{600, 0, 60}));
  EXPECT_EQ(kernel_.writes(), 1u);
  EXPECT_EQ(kernel_.kernelTimeouts(), (Timeouts{600, 120, 60}));
  ASSERT_TRUE(applyTimeouts(Timeouts{600, 0, 60}));
  EXPECT_EQ(kernel_.writes(), 1u);
}

// kChange: planned against the table the last complete pass left, no dump.
TEST_F(ReconcilerTest, ChangePassAfterACompletePassReadsNothingAndWritesOnlyTheChanges) {
  ASSERT_TRUE(reconcile(desired(), false));
  const auto dumps = kernel_.dumps();
  const auto writes = kernel_.writes();
  cfg_.virtual_servers[0].real_servers[0].weight = 9;                          // edit
  cfg_.virtual_servers[0].real_servers.push_back(real("203.0.113.23:80", 1));  // add
  cfg_.virtual_servers.pop_back();                                             // delete dns
  auto r = reconcile(desired(), false, Pass::kChange);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(kernel_.dumps() - dumps, 0u);
  EXPECT_EQ(r->dumps, 0u);
  EXPECT_EQ(kernel_.writes() - writes, 3u);
  EXPECT_EQ(kernel_.requests(), kernel_.writes()) << "no refused request either";
  EXPECT_EQ(r->applied, 3u);
  EXPECT_TRUE(plan(desired(), kernel_.table(), true).empty());
  // The next change is planned against this one's result.
  cfg_.virtual_servers[0].real_servers[0].weight = 2;
  r = reconcile(desired(), false, Pass::kChange);
  ASSERT_TRUE(r);
  EXPECT_EQ(kernel_.dumps() - dumps, 0u);
  EXPECT_EQ(kernel_.writes() - writes, 4u);
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.21:80"))->weight, 2);
}

TEST_F(ReconcilerTest, VerifyPassDumps) {
  ASSERT_TRUE(reconcile(desired(), false));
  const auto dumps = kernel_.dumps();
  auto r = reconcile(desired(), false, Pass::kVerify);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dumps, 1u);
  EXPECT_EQ(kernel_.dumps() - dumps, 1u);
}

TEST_F(ReconcilerTest, ChangePassWithoutAnAppliedTableDumps) {
  auto r = reconcile(desired(), false, Pass::kChange);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dumps, 1u);
  EXPECT_EQ(kernel_.writes(), 5u);
  // After a failed pass the kernel holds neither table: dump again.
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  kernel_.injectErrors({ErrorCode::kPermissionDenied});
  ASSERT_FALSE(reconcile(desired(h), false, Pass::kChange));
  const auto dumps = kernel_.dumps();
  r = reconcile(desired(h), false, Pass::kChange);
  ASSERT_TRUE(r);
  EXPECT_EQ(kernel_.dumps() - dumps, 1u);
  EXPECT_TRUE(plan(desired(h), kernel_.table(), true).empty());
}

TEST_F(ReconcilerTest, NotFoundDuringAChangePassRedumpsAndRepairs) {
  ASSERT_TRUE(reconcile(desired(), false));
  // Someone deletes web; tandem, not having dumped since, goes to edit one of its weights.
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  const auto dumps = kernel_.dumps();
  auto r = reconcile(desired(h), false, Pass::kChange);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->replans, 1u);
  EXPECT_EQ(r->dumps, 1u);
  EXPECT_EQ(kernel_.dumps() - dumps, 1u);
  EXPECT_EQ(r->drift, 1u);
  EXPECT_TRUE(plan(desired(h), kernel_.table(), true).empty());
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.21:80"))->weight, 0);
  EXPECT_EQ(log_.count(LogLevel::kWarning,
                       "virtual service tcp 198.51.100.10:80 was deleted behind tandem's back "
                       "(ipvsadm -D?); restored"),
            1u);
}

TEST_F(ReconcilerTest, ChangesMadeBeforeTheKernelMovedAreNotDrift) {
  ASSERT_TRUE(reconcile(desired(), false));
  // dns's weight goes in, then web's edit finds web gone: only web's loss is drift.
  Health h;
  h.set("dns", ep("198.51.100.31:53"), false);
  h.set("web", ep("198.51.100.21:80"), false);
  kernel_.failRequestAfter(1, ErrorCode::kNotFound);
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  auto r = reconcile(desired(h), false, Pass::kChange);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->drift, 1u);
  EXPECT_EQ(log_.count(LogLevel::kWarning, "behind tandem's back"), 1u);
  EXPECT_EQ(log_.count(LogLevel::kWarning, "tcp 198.51.100.10:80 was deleted"), 1u);
  EXPECT_TRUE(plan(desired(h), kernel_.table(), true).empty());
}

TEST_F(ReconcilerTest, ChangePassWithANewManageDumps) {
  Service theirs;
  theirs.key = webKey();
  theirs.key.port = 25;
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kAddService, theirs, std::nullopt}));
  ASSERT_TRUE(reconcile(desired(), false));
  auto r = reconcile(desired(), true, Pass::kChange);
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
  fakes::FakeIpvsKernel kernel_{dispatcher_};
  Log log_;
  config::Config cfg_ = twoServices();
};

TEST_F(ReconcileLoopTest, ConfigureAppliesAtOnceThenEveryInterval) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
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
  dispatcher_.advance(0ms);
  dispatcher_.advance(1234ms);
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kDelService, serviceOf(webKey()), std::nullopt}));
  dispatcher_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_TRUE(kernel_.hasService(webKey()));
  EXPECT_EQ(log_.count(LogLevel::kWarning, "deleted behind tandem's back"), 1u);
  loop.stop();
}

TEST_F(ReconcileLoopTest, HealthChangeAppliesAtOnceWithOneWrite) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
  const auto before = kernel_.writes();
  loop.setHealth("web", ep("198.51.100.21:80"), false);
  dispatcher_.advance(0ms);
  EXPECT_EQ(kernel_.writes() - before, 1u);
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.21:80"))->weight, 0);
  loop.setHealth("web", ep("198.51.100.21:80"), false);  // no change: no pass
  dispatcher_.advance(0ms);
  loop.setHealth("nope", ep("198.51.100.21:80"), false);  // no such service: no pass
  dispatcher_.advance(0ms);
  EXPECT_EQ(loop.passes(), 2u);
  loop.setHealth("web", ep("198.51.100.21:80"), true);
  dispatcher_.advance(0ms);
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
  dispatcher_.advance(0ms);
  cfg_.virtual_servers[0].real_servers[0].weight = 7;
  cfg_.ipvs.monitor_interval = 1000ms;
  const auto before = kernel_.writes();
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
  EXPECT_EQ(kernel_.writes() - before, 1u);
  dispatcher_.advance(1000ms);
  EXPECT_EQ(loop.passes(), 3u) << "the new interval holds";
  loop.stop();
}

TEST_F(ReconcileLoopTest, FailureIsLoggedOnceAndRetriedEachInterval) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  kernel_.failDumps(3);
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
  EXPECT_FALSE(loop.lastPassOk());
  dispatcher_.advance(10s);
  EXPECT_EQ(log_.count(LogLevel::kError, "IPVS table not in sync"), 1u);
  EXPECT_EQ(kernel_.writes(), 0u);
  dispatcher_.advance(5s);  // the fourth pass reads the table
  EXPECT_TRUE(loop.lastPassOk());
  EXPECT_EQ(kernel_.writes(), 5u);
  EXPECT_EQ(log_.count(LogLevel::kNotice, "in sync again"), 1u);
  loop.stop();
}

TEST_F(ReconcileLoopTest, TimeoutsFromTheConfig) {
  cfg_.ipvs.tcp_timeout = 600s;
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
  EXPECT_EQ(kernel_.kernelTimeouts().tcp, 600u);
  EXPECT_EQ(kernel_.writes(), 6u);
  dispatcher_.advance(5s);
  EXPECT_EQ(kernel_.writes(), 6u);
  loop.stop();
}

TEST_F(ReconcileLoopTest, ReloadAndHealthChangesDoNotDumpTheMonitorPassDoes) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
  EXPECT_EQ(kernel_.dumps(), 1u);
  const auto writes = kernel_.writes();
  cfg_.virtual_servers[0].real_servers[1].weight = 8;
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
  EXPECT_EQ(kernel_.dumps(), 1u) << "a reload plans against the table the last pass left";
  EXPECT_EQ(kernel_.writes() - writes, 1u);
  loop.setHealth("web", ep("198.51.100.21:80"), false);
  dispatcher_.advance(0ms);
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
  dispatcher_.advance(0ms);
  cfg_.ipvs.monitor_interval = 1000ms;
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
  EXPECT_EQ(kernel_.dumps(), 2u);
  loop.stop();
}

TEST_F(ReconcileLoopTest, FrequentHealthChangesDoNotPostponeTheMonitorPass) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
  dispatcher_.advance(500ms);
  ASSERT_TRUE(kernel_.applyDirect(
      Op{Kind::kDelService, serviceOf(desiredService(cfg_.virtual_servers[1]).key), std::nullopt}));
  // web's first server flaps every 0.9 s: each flap is a (kChange) pass of its own, and none
  // may restart the interval, or the kernel would never be read again.
  for (int i = 0; i < 5; ++i) {
    dispatcher_.advance(900ms);
    loop.setHealth("web", ep("198.51.100.21:80"), i % 2 == 1);
    dispatcher_.advance(0ms);
  }
  EXPECT_TRUE(kernel_.hasService(desiredService(cfg_.virtual_servers[1]).key))
      << "dns, deleted at 0.5 s, is restored by the monitor pass at 5 s";
  EXPECT_EQ(log_.count(LogLevel::kWarning, "udp 198.51.100.11:53 was deleted"), 1u);
  loop.stop();
}

// 1,000 services x 10 real servers: 11,000 requests on a first apply.
config::Config bigConfig() {
  config::Config cfg;
  for (int i = 0; i < 1000; ++i) {
    config::VirtualServer vs;
    vs.name = "vs" + std::to_string(i);
    vs.address = ep(("198.51.100.10:" + std::to_string(1000 + i)).c_str());
    for (int r = 1; r <= 10; ++r) {
      vs.real_servers.push_back(real(("203.0.113." + std::to_string(r) + ":80").c_str(), 1));
    }
    cfg.virtual_servers.push_back(vs);
  }
  cfg.ipvs.monitor_interval = 5000ms;
  return cfg;
}

// Slicing: a kernel that answers at once still gets at most kSliceRequests requests per loop
// callback; the rest go out from later loop iterations.
TEST_F(ReconcileLoopTest, ALongPlanIsSentInSlicesEvenToAKernelThatAnswersAtOnce) {
  fakes::FakeIpvsKernel instant;  // answers before apply() returns
  IpvsReconcileLoop loop(dispatcher_, instant, log_.sink());
  loop.configure(bigConfig());
  EXPECT_EQ(instant.requests(), 0u) << "the plan after the dump waits for the loop";
  // The steps after the dump, one loop iteration each: sorting and drift, then the plan, 100
  // services at a time, the last of them sending the first slice.
  size_t steps = 0;
  while (instant.requests() == 0 && dispatcher_.step()) ++steps;
  EXPECT_EQ(steps, 1 + 1000 / Reconciler::kPlanServicesPerStep);
  EXPECT_EQ(instant.requests(), Reconciler::kSliceRequests) << "one slice per loop iteration";
  ASSERT_TRUE(dispatcher_.step());
  EXPECT_EQ(instant.requests(), 2 * Reconciler::kSliceRequests);
  EXPECT_TRUE(loop.passRunning());
  EXPECT_EQ(loop.passes(), 0u);
  dispatcher_.advance(0ms);
  EXPECT_EQ(instant.requests(), 11000u);
  EXPECT_EQ(loop.passes(), 1u);
  EXPECT_TRUE(loop.lastPassOk());
  loop.stop();
}

// A monitor pass of 11,000 rules in sync sends nothing, but reading the dump still costs: the
// sort, the drift check and the plan run in loop iterations of their own, also against a
// kernel that answers the dump at once.
TEST_F(ReconcileLoopTest, AMonitorPassOfABigTableRunsInLoopIterations) {
  fakes::FakeIpvsKernel instant;
  IpvsReconcileLoop loop(dispatcher_, instant, log_.sink());
  loop.configure(bigConfig());
  dispatcher_.advance(0ms);
  ASSERT_EQ(loop.passes(), 1u);
  const size_t writes = instant.writes();
  loop.reconcileNow();
  EXPECT_TRUE(loop.passRunning()) << "the dump is answered, the rest waits for the loop";
  size_t steps = 0;
  while (loop.passRunning() && dispatcher_.step()) ++steps;
  EXPECT_FALSE(loop.passRunning());
  EXPECT_EQ(loop.passes(), 2u);
  EXPECT_GE(steps, 1 + 1000 / Reconciler::kPlanServicesPerStep);
  EXPECT_EQ(instant.writes(), writes) << "in sync: nothing to send";
  loop.stop();
}

// The heartbeat's view: an 11,000-request first apply runs across many loop iterations, never
// more than kMaxInFlight requests in flight, and a 200 ms timer armed before it fires on time
// while it runs.
TEST_F(ReconcileLoopTest, AnElevenThousandRequestApplyLetsOtherTimersRunOnTime) {
  kernel_.setLatency(1ms);
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  std::vector<std::pair<loop::MonoTime, size_t>> beats;
  const loop::MonoTime start = dispatcher_.now();
  std::unique_ptr<loop::Timer> heartbeat;
  heartbeat = dispatcher_.createTimer([&] {
    beats.emplace_back(dispatcher_.now(), kernel_.requests());
    heartbeat->arm(200ms);
  });
  heartbeat->arm(200ms);
  loop.configure(bigConfig());
  EXPECT_EQ(kernel_.requests(), 0u) << "nothing is sent before the dump is answered";
  dispatcher_.advance(1000ms);
  EXPECT_EQ(loop.passes(), 1u);
  EXPECT_TRUE(loop.lastPassOk());
  EXPECT_EQ(kernel_.writes(), 11000u);
  EXPECT_LE(kernel_.maxInFlight(), Reconciler::kMaxInFlight);
  EXPECT_GE(kernel_.rounds(), 11000u / Reconciler::kMaxInFlight) << "many loop iterations";
  ASSERT_EQ(beats.size(), 5u);
  size_t during = 0;
  for (size_t i = 0; i < beats.size(); ++i) {
    EXPECT_EQ(beats[i].first - start, Millis(200 * (i + 1))) << "beat " << i << " on time";
    during += beats[i].second > 0 && beats[i].second < 11000u;
  }
  EXPECT_GE(during, 1u) << "the heartbeat fired while the apply was running";
  ASSERT_NE(loop.lastTable(), nullptr);
  size_t dests = 0;
  for (const auto& svc : loop.lastTable()->services) dests += svc.destinations.size();
  EXPECT_EQ(loop.lastTable()->services.size(), 1000u);
  EXPECT_EQ(dests, 10000u);
  heartbeat.reset();
  loop.stop();
}

// Every request of a pass is made under a cork, so NetlinkKernel sends each window's worth as
// one datagram; every cork is lifted, or the socket would hold the next requests back.
TEST_F(ReconcileLoopTest, EveryRequestOfAPassIsCorkedAndEveryCorkLifted) {
  kernel_.setLatency(1ms);
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(bigConfig());
  dispatcher_.advance(1000ms);
  ASSERT_EQ(loop.passes(), 1u);
  EXPECT_EQ(kernel_.requests(), 11000u);
  EXPECT_EQ(kernel_.corkedRequests(), 11000u);
  EXPECT_EQ(kernel_.corkDepth(), 0);
  loop.stop();
}

TEST_F(ReconcileLoopTest, AKernelThatAnswersAtOnceIsUncorkedToo) {
  fakes::FakeIpvsKernel instant;
  IpvsReconcileLoop loop(dispatcher_, instant, log_.sink());
  loop.configure(bigConfig());
  dispatcher_.advance(0ms);
  ASSERT_EQ(loop.passes(), 1u);
  EXPECT_EQ(instant.corkedRequests(), 11000u);
  EXPECT_EQ(instant.corkDepth(), 0);
  loop.stop();
}

TEST_F(ReconcileLoopTest, ASilentKernelIsATimeoutLoggedAndTheLoopGoesOn) {
  kernel_.silence(1000ms);
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  int beats = 0;
  std::unique_ptr<loop::Timer> heartbeat;
  heartbeat = dispatcher_.createTimer([&] {
    ++beats;
    heartbeat->arm(200ms);
  });
  heartbeat->arm(200ms);
  loop.configure(cfg_);
  dispatcher_.advance(999ms);
  EXPECT_EQ(loop.passes(), 0u);
  EXPECT_EQ(beats, 4);
  dispatcher_.advance(1ms);
  EXPECT_EQ(loop.passes(), 1u);
  EXPECT_FALSE(loop.lastPassOk());
  EXPECT_EQ(log_.count(LogLevel::kError,
                       "IPVS table not in sync: cannot read the IPVS table: the kernel did not "
                       "answer within 1000 ms (list the IPVS services)"),
            1u);
  EXPECT_EQ(loop.lastTable(), nullptr);
  // The kernel answers again: the next monitor pass repairs everything.
  kernel_.speak();
  dispatcher_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_TRUE(loop.lastPassOk());
  EXPECT_EQ(kernel_.writes(), 5u);
  EXPECT_EQ(log_.count(LogLevel::kNotice, "in sync again"), 1u);
  EXPECT_EQ(beats, 30);
  heartbeat.reset();
  loop.stop();
}

TEST_F(ReconcileLoopTest, ARequestThatTimesOutFailsThePassNamingIt) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
  kernel_.silence(1000ms);
  loop.setHealth("web", ep("198.51.100.21:80"), false);
  dispatcher_.advance(1000ms);
  EXPECT_EQ(log_.count(LogLevel::kError,
                       "edit real server 198.51.100.21:80 of tcp 198.51.100.10:80 weight=0 "
                       "forward=nat failed: the kernel did not answer within 1000 ms"),
            1u);
  kernel_.speak();
  dispatcher_.advance(cfg_.ipvs.monitor_interval);
  EXPECT_TRUE(loop.lastPassOk());
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.21:80"))->weight, 0);
  loop.stop();
}

TEST_F(ReconcileLoopTest, AReloadDuringAPassIsAppliedAfterIt) {
  kernel_.setLatency(1ms);
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  loop.configure(cfg_);
  dispatcher_.advance(1ms);  // the dump is answered; the first add is in flight
  ASSERT_TRUE(loop.passRunning());
  cfg_.virtual_servers[0].real_servers[0].weight = 7;
  loop.configure(cfg_);
  loop.setHealth("web", ep("198.51.100.22:80"), false);
  EXPECT_EQ(kernel_.maxInFlight(), 1u) << "the new passes wait for the running one";
  dispatcher_.advance(100ms);
  EXPECT_FALSE(loop.passRunning());
  EXPECT_EQ(loop.passes(), 2u) << "the reload and the health change: one queued pass";
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.21:80"))->weight, 7);
  EXPECT_EQ(kernel_.dest(webKey(), destKey("198.51.100.22:80"))->weight, 0);
  EXPECT_EQ(kernel_.dumps(), 1u) << "the queued change plans against the first pass's table";
  loop.stop();
}

TEST_F(ReconcileLoopTest, StoppingOrDestroyingTheLoopDuringAPassDropsIt) {
  kernel_.setLatency(1ms);
  auto loop = std::make_unique<IpvsReconcileLoop>(dispatcher_, kernel_, log_.sink());
  loop->configure(bigConfig());
  dispatcher_.advance(5ms);
  ASSERT_TRUE(loop->passRunning());
  loop->stop();
  EXPECT_FALSE(loop->passRunning());
  const size_t sent = kernel_.requests();
  dispatcher_.advance(1000ms);
  EXPECT_EQ(kernel_.requests(), sent) << "an abandoned pass sends nothing more";
  EXPECT_EQ(loop->passes(), 0u);
  // Again, and this time the loop goes away with answers still due.
  loop->configure(bigConfig());
  dispatcher_.advance(5ms);
  ASSERT_TRUE(loop->passRunning());
  loop.reset();
  dispatcher_.advance(1000ms);  // the answers come; nothing is called back
  EXPECT_EQ(kernel_.inFlight(), 0u);
}

TEST_F(ReconcileLoopTest, LastTableIsTheKernelsAsTheLastPassLeftIt) {
  IpvsReconcileLoop loop(dispatcher_, kernel_, log_.sink());
  EXPECT_EQ(loop.lastTable(), nullptr);
  Service theirs;
  theirs.key = webKey();
  theirs.key.port = 25;
  ASSERT_TRUE(kernel_.applyDirect(Op{Kind::kAddService, theirs, std::nullopt}));
  loop.configure(cfg_);
  dispatcher_.advance(0ms);
  ASSERT_NE(loop.lastTable(), nullptr);
  EXPECT_EQ(loop.lastTable()->services.size(), 3u) << "the dump, with the foreign service";
  loop.setHealth("web", ep("198.51.100.21:80"), false);
  dispatcher_.advance(0ms);
  EXPECT_EQ(kernel_.dumps(), 1u);
  const Table& t = *loop.lastTable();
  auto web = std::find_if(t.services.begin(), t.services.end(),
                          [](const ServiceState& s) { return s.service.key == webKey(); });
  ASSERT_NE(web, t.services.end());
  auto rs = std::find_if(
      web->destinations.begin(), web->destinations.end(),
      [](const DestinationState& d) { return d.dest.key == destKey("198.51.100.21:80"); });
  ASSERT_NE(rs, web->destinations.end());
  EXPECT_EQ(rs->dest.weight, 0) << "the acknowledged edit, without a dump";
  loop.stop();
}

}  // namespace
}  // namespace tandem::resources::ipvs
