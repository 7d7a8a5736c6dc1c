// The IPVS netlink backend (NetlinkKernel) against the real kernel, with ipvsadm as the
// independent reader. Needs root and a kernel with IPVS: test/vm/tests/ipvs_backend runs it in
// the VM (this host's kernel has none). Prints "SKIPPED: <reason>" and exits 0 when it cannot
// run, or fails instead under TANDEM_TEST_NO_SKIP=1.
//
// The process moves into a network namespace of its own first (IPVS tables are per namespace),
// with a dummy interface holding 203.0.113.1/24 and 2001:db8::1/64 so that the destinations
// are unicast addresses there, as the kernel requires.
//
// One matrix: every scheduler the kernel has, tcp/udp/sctp/fwmark over IPv4 and IPv6,
// persistence with timeout and netmask, sh/mh flags, one-packet scheduling, NAT/DR/tunnel
// (ipip, gue, gre; mixed families) destinations with weights and thresholds. It is applied
// through apply(), read back with `ipvsadm -Sn` (rules), `-Ln --thresholds` and `-Ln --tun-info`
// and compared exactly, and with dump(); then edited, partly deleted and read back again.
#include <gtest/gtest.h>
#include <linux/ip_vs.h>
#include <netinet/in.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ipvs/ipvs_netlink.h"
#include "loop/qb_dispatcher.h"
#include "must_run.h"

namespace tandem::resources::ipvs {
namespace {

NetlinkKernel* g_kernel = nullptr;
loop::Dispatcher* g_loop = nullptr;

// Runs the real loop until the asynchronous request that start() makes completes: the tests
// read like the requests they make.
template <typename T>
Result<T> await(const std::function<void(KernelDone<T>)>& start) {
  std::optional<Result<T>> out;
  bool running = false;
  start([&](Result<T> r) {
    out = std::move(r);
    if (running) g_loop->stop();
  });
  if (!out) {
    running = true;
    g_loop->run();
  }
  if (!out) return fail(ErrorCode::kInternal, "the loop stopped before the request completed");
  return std::move(*out);
}
Result<Table> dumpNow() {
  return await<Table>([](KernelDone<Table> d) { g_kernel->dump(std::move(d)); });
}
Result<void> applyNow(const Op& op) {
  return await<void>([&](KernelDone<void> d) { g_kernel->apply(op, std::move(d)); });
}
Result<void> flushNow() {
  return await<void>([](KernelDone<void> d) { g_kernel->flush(std::move(d)); });
}
Result<Timeouts> timeoutsNow() {
  return await<Timeouts>([](KernelDone<Timeouts> d) { g_kernel->timeouts(std::move(d)); });
}
Result<void> setTimeoutsNow(const Timeouts& t) {
  return await<void>([&](KernelDone<void> d) { g_kernel->setTimeouts(t, std::move(d)); });
}
std::vector<std::string> g_schedulers;  // the schedulers this kernel accepted

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    while (!l.empty() && l.back() == ' ') l.pop_back();
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

IpAddress ip(const char* s) { return *IpAddress::parse(s); }

ServiceKey key(uint16_t proto, const char* addr, uint16_t port) {
  IpAddress a = ip(addr);
  return ServiceKey{a.family, proto, a, port, 0};
}
ServiceKey mark(uint32_t fwmark, Family f) { return ServiceKey{f, 0, IpAddress{}, 0, fwmark}; }

Service svc(ServiceKey k, const char* sched, uint32_t flags = 0, uint32_t timeout = 0,
            uint32_t netmask = 0) {
  Service s;
  s.key = k;
  s.scheduler = sched;
  s.flags = flags;
  s.timeout_s = timeout;
  s.netmask = netmask;
  return s;
}

Destination dst(const char* addr, uint16_t port, Forward fwd, int32_t weight, uint32_t upper = 0,
                uint32_t lower = 0) {
  Destination d;
  d.key = DestKey{ip(addr), port};
  d.family = d.key.address.family;
  d.forward = fwd;
  d.weight = weight;
  d.upper_threshold = upper;
  d.lower_threshold = lower;
  return d;
}

Destination tun(const char* addr, uint16_t port, Tunnel t, int32_t weight, uint16_t tport = 0,
                uint16_t tflags = 0) {
  Destination d = dst(addr, port, Forward::kTunnel, weight);
  d.tunnel_type = t;
  d.tunnel_port = tport;
  d.tunnel_flags = tflags;
  return d;
}

// ---- what ipvsadm prints for a table (its -S rule format, --thresholds, --tun-info) ----

std::string endpoint(const IpAddress& a, uint16_t port) {
  return (a.family == Family::kInet6 ? "[" + a.toString() + "]" : a.toString()) + ":" +
         std::to_string(port);
}

std::string serviceSpec(const ServiceKey& k) {
  if (k.fwmark != 0) {
    return "-f " + std::to_string(k.fwmark) + (k.family == Family::kInet6 ? " -6" : "");
  }
  const char* p = k.protocol == IPPROTO_TCP   ? "-t "
                  : k.protocol == IPPROTO_UDP ? "-u "
                                              : "--sctp-service ";
  return p + endpoint(k.address, k.port);
}

std::string ruleOf(const Service& s) {
  std::string r = "-A " + serviceSpec(s.key) + " -s " + s.scheduler;
  if ((s.flags & IP_VS_SVC_F_PERSISTENT) != 0) {
    r += " -p " + std::to_string(s.timeout_s);
    if (s.netmask != 0 && s.key.family == Family::kInet) {
      IpAddress m;
      for (int i = 0; i < 4; ++i) m.bytes[i] = static_cast<uint8_t>(s.netmask >> (24 - 8 * i));
      r += " -M " + m.toString();
    } else if (s.netmask != 0) {
      r += " -M " + std::to_string(s.netmask);
    }
  }
  if ((s.flags & IP_VS_SVC_F_ONEPACKET) != 0) r += " -o";
  const uint32_t sched = s.flags & (IP_VS_SVC_F_SCHED1 | IP_VS_SVC_F_SCHED2);
  if (sched != 0) {
    const std::string n = s.scheduler;  // sh and mh name their flags alike
    std::vector<std::string> names;
    if ((sched & IP_VS_SVC_F_SCHED1) != 0) names.push_back(n + "-fallback");
    if ((sched & IP_VS_SVC_F_SCHED2) != 0) names.push_back(n + "-port");
    r += " -b " + names[0] + (names.size() > 1 ? "," + names[1] : "");
  }
  return r;
}

std::string ruleOf(const Service& s, const Destination& d) {
  std::string r = "-a " + serviceSpec(s.key) + " -r " + endpoint(d.key.address, d.key.port);
  r += d.forward == Forward::kMasq ? " -m" : d.forward == Forward::kDirectRoute ? " -g" : " -i";
  r += " -w " + std::to_string(d.weight);
  if (d.forward == Forward::kTunnel) {
    const char* t[] = {"ipip", "gue", "gre"};
    r += std::string(" --tun-type ") + t[static_cast<int>(d.tunnel_type)];
    if (d.tunnel_type == Tunnel::kGue) r += " --tun-port " + std::to_string(d.tunnel_port);
    if (d.tunnel_type != Tunnel::kIpip) {
      r += (d.tunnel_flags & IP_VS_TUNNEL_ENCAP_FLAG_CSUM) != 0 ? " --tun-csum" : " --tun-nocsum";
    }
  }
  return r;
}

std::string tunInfoOf(const Destination& d) {
  if (d.forward != Forward::kTunnel) return "n/a";
  const bool csum = (d.tunnel_flags & IP_VS_TUNNEL_ENCAP_FLAG_CSUM) != 0;
  switch (d.tunnel_type) {
    case Tunnel::kIpip:
      return "ipip";
    case Tunnel::kGue:
      return "gue:" + std::to_string(d.tunnel_port) + (csum ? ":+c" : ":-c");
    case Tunnel::kGre:
      return std::string("gre") + (csum ? ":+c" : ":-c");
  }
  return "?";
}

using Want = std::vector<std::pair<Service, std::vector<Destination>>>;

std::vector<std::string> expectedRules(const Want& want) {
  std::vector<std::string> out;
  for (const auto& [s, ds] : want) {
    out.push_back(ruleOf(s));
    for (const auto& d : ds) out.push_back(ruleOf(s, d));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Rows of `ipvsadm -Ln --OPTION` under each service, keyed "service line|dest endpoint".
std::map<std::string, std::vector<std::string>> rows(const std::string& option) {
  std::map<std::string, std::vector<std::string>> out;
  std::string service;
  for (const auto& l : lines(run("ipvsadm -Ln " + option))) {
    std::istringstream in(l);
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    if (f.size() >= 2 && (f[0] == "TCP" || f[0] == "UDP" || f[0] == "SCTP" || f[0] == "FWM")) {
      service = f[0] + " " + f[1] + (f.size() > 2 && f[2] == "IPv6" ? " IPv6" : "");
    } else if (f.size() >= 2 && f[0] == "->" && f[1] != "RemoteAddress:Port") {
      out[service + "|" + f[1]] = std::vector<std::string>(f.begin() + 2, f.end());
    }
  }
  return out;
}

std::string listedService(const ServiceKey& k) {
  if (k.fwmark != 0) {
    return "FWM " + std::to_string(k.fwmark) + (k.family == Family::kInet6 ? " IPv6" : "");
  }
  const char* p = k.protocol == IPPROTO_TCP ? "TCP " : k.protocol == IPPROTO_UDP ? "UDP " : "SCTP ";
  return p + endpoint(k.address, k.port);
}

Table expectedTable(const Want& want) {
  Table t;
  for (const auto& [s, ds] : want) {
    ServiceState st;
    st.service = s;
    for (const auto& d : ds) st.destinations.push_back(DestinationState{d, 0, 0, 0, {}});
    std::sort(st.destinations.begin(), st.destinations.end(),
              [](const auto& a, const auto& b) { return a.dest.key < b.dest.key; });
    t.services.push_back(std::move(st));
  }
  std::sort(t.services.begin(), t.services.end(),
            [](const auto& a, const auto& b) { return a.service.key < b.service.key; });
  return t;
}

// The kernel's table, read by ipvsadm and by dump(), is exactly `want`.
void expectReadBack(const Want& want) {
  auto got_rules = lines(run("ipvsadm -Sn"));
  std::sort(got_rules.begin(), got_rules.end());
  EXPECT_EQ(got_rules, expectedRules(want));

  auto thresholds = rows("--thresholds");
  auto tunnels = rows("--tun-info");
  size_t dests = 0;
  for (const auto& [s, ds] : want) {
    for (const auto& d : ds) {
      ++dests;
      const std::string k = listedService(s.key) + "|" + endpoint(d.key.address, d.key.port);
      ASSERT_TRUE(thresholds.count(k)) << k;
      ASSERT_GE(thresholds[k].size(), 2u) << k;
      EXPECT_EQ(thresholds[k][0], std::to_string(d.upper_threshold)) << k;
      EXPECT_EQ(thresholds[k][1], std::to_string(d.lower_threshold)) << k;
      ASSERT_TRUE(tunnels.count(k)) << k;
      ASSERT_GE(tunnels[k].size(), 2u) << k;
      EXPECT_EQ(tunnels[k][1], tunInfoOf(d)) << k;
    }
  }
  EXPECT_EQ(thresholds.size(), dests);

  const uint64_t writes = g_kernel->writes();
  auto table = dumpNow();
  ASSERT_TRUE(table) << table.error().message;
  EXPECT_EQ(g_kernel->writes(), writes) << "a dump is not a write";
  Table exp = expectedTable(want);
  ASSERT_EQ(table->services.size(), exp.services.size());
  for (size_t i = 0; i < exp.services.size(); ++i) {
    const auto& g = table->services[i];
    const auto& e = exp.services[i];
    EXPECT_EQ(g.service, e.service)
        << e.service.key.toString() << " read back as " << g.service.key.toString() << " "
        << g.service.scheduler << " flags " << g.service.flags << " netmask " << g.service.netmask;
    ASSERT_EQ(g.destinations.size(), e.destinations.size()) << e.service.key.toString();
    for (size_t j = 0; j < e.destinations.size(); ++j) {
      EXPECT_EQ(g.destinations[j].dest, e.destinations[j].dest)
          << e.service.key.toString() << " destination "
          << e.destinations[j].dest.key.address.toString();
    }
  }
}

void applyOk(const Op& op) {
  auto r = applyNow(op);
  ASSERT_TRUE(r) << op.toString() << ": " << r.error().message;
}

void applyAll(const Want& want) {
  for (const auto& [s, ds] : want) {
    applyOk(Op{Op::Kind::kAddService, s, std::nullopt});
    for (const auto& d : ds) applyOk(Op{Op::Kind::kAddDest, s, d});
  }
}

Want matrix() {
  using F = Forward;
  Want w;
  w.push_back(
      {svc(key(IPPROTO_TCP, "198.51.100.10", 80), "wrr", IP_VS_SVC_F_PERSISTENT, 60, 0xffffff00),
       {dst("203.0.113.20", 8080, F::kMasq, 5, 100, 10),
        tun("203.0.113.21", 80, Tunnel::kGue, 1, 6080), dst("203.0.113.22", 80, F::kDirectRoute, 2),
        tun("203.0.113.23", 80, Tunnel::kGue, 1, 6081, IP_VS_TUNNEL_ENCAP_FLAG_CSUM),
        tun("203.0.113.24", 80, Tunnel::kGre, 1, 0, IP_VS_TUNNEL_ENCAP_FLAG_CSUM),
        tun("203.0.113.25", 80, Tunnel::kIpip, 0)}});
  w.push_back(
      {svc(key(IPPROTO_UDP, "2001:db8::10", 53), "wlc",
           IP_VS_SVC_F_PERSISTENT | IP_VS_SVC_F_ONEPACKET, 300, 64),
       {tun("203.0.113.26", 53, Tunnel::kIpip, 3), dst("2001:db8::20", 53, F::kMasq, 3, 10, 2)}});
  w.push_back(
      {svc(mark(7, Family::kInet), "sh", IP_VS_SVC_F_SCHED_SH_FALLBACK | IP_VS_SVC_F_SCHED_SH_PORT),
       {dst("203.0.113.27", 0, F::kDirectRoute, 3)}});
  w.push_back({svc(mark(8, Family::kInet6), "mh", IP_VS_SVC_F_SCHED1 | IP_VS_SVC_F_SCHED2),
               {dst("2001:db8::28", 0, F::kDirectRoute, 3)}});
  w.push_back({svc(mark(9, Family::kInet), "mh", IP_VS_SVC_F_SCHED1), {}});
  w.push_back({svc(key(IPPROTO_SCTP, "198.51.100.11", 5000), "lblcr"),
               {dst("203.0.113.29", 5000, F::kMasq, 1)}});
  w.push_back({svc(key(IPPROTO_SCTP, "2001:db8::11", 5000), "dh", IP_VS_SVC_F_PERSISTENT, 30),
               {tun("2001:db8::29", 5000, Tunnel::kIpip, 7)}});
  w.push_back({svc(key(IPPROTO_UDP, "198.51.100.12", 53), "rr", IP_VS_SVC_F_ONEPACKET), {}});
  // Every scheduler on a service of its own: families alternate, protocols rotate.
  const uint16_t protos[] = {IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP};
  for (size_t i = 0; i < g_schedulers.size(); ++i) {
    const bool v6 = i % 2 == 1;
    const auto port = static_cast<uint16_t>(10000 + i);
    Service s = svc(key(protos[i % 3], v6 ? "2001:db8::50" : "198.51.100.50", port),
                    g_schedulers[i].c_str());
    w.push_back({s,
                 {dst(v6 ? "2001:db8::60" : "203.0.113.60", static_cast<uint16_t>(8000 + i),
                      F::kMasq, static_cast<int32_t>(i + 1))}});
  }
  return w;
}

class IpvsKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = flushNow();
    ASSERT_TRUE(r) << r.error().message;
  }
  void TearDown() override { (void)flushNow(); }
};

TEST_F(IpvsKernel, MatrixReadsBackExactlyThroughIpvsadmAndDump) {
  const Want want = matrix();
  size_t ops = 0;
  for (const auto& [s, ds] : want) ops += 1 + ds.size();
  const uint64_t before = g_kernel->writes();
  applyAll(want);
  EXPECT_EQ(g_kernel->writes() - before, ops);
  expectReadBack(want);
  std::cout << "applied " << ops << " ops (" << want.size() << " services, " << g_schedulers.size()
            << " schedulers) and read them back\n";
}

TEST_F(IpvsKernel, EditsAndDeletesReadBack) {
  Want want = matrix();
  applyAll(want);

  // The persistent wrr service becomes plain lc; its NAT destination is drained.
  Service& s = want[0].first;
  s = svc(s.key, "lc");
  applyOk(Op{Op::Kind::kEditService, s, std::nullopt});
  Destination& nat = want[0].second[0];
  nat.weight = 0;
  nat.upper_threshold = 0;
  nat.lower_threshold = 0;
  applyOk(Op{Op::Kind::kEditDest, s, nat});
  // The IPv6 service turns its tunnel destination into a weight-9 one, gains persistence
  // netmask 48.
  Service& s6 = want[1].first;
  s6.netmask = 48;
  applyOk(Op{Op::Kind::kEditService, s6, std::nullopt});
  want[1].second[0].weight = 9;
  applyOk(Op{Op::Kind::kEditDest, s6, want[1].second[0]});
  expectReadBack(want);

  // Delete a destination of each of the first two services, then the fwmark 7 service whole.
  applyOk(Op{Op::Kind::kDelDest, want[0].first, want[0].second[2]});
  want[0].second.erase(want[0].second.begin() + 2);
  applyOk(Op{Op::Kind::kDelDest, want[1].first, want[1].second[1]});
  want[1].second.pop_back();
  applyOk(Op{Op::Kind::kDelDest, want[2].first, want[2].second[0]});
  applyOk(Op{Op::Kind::kDelService, want[2].first, std::nullopt});
  want.erase(want.begin() + 2);
  expectReadBack(want);

  // And everything else.
  for (const auto& [sv, ds] : want) {
    for (const auto& d : ds) applyOk(Op{Op::Kind::kDelDest, sv, d});
    applyOk(Op{Op::Kind::kDelService, sv, std::nullopt});
  }
  expectReadBack({});
  EXPECT_EQ(run("ipvsadm -Sn"), "");
}

TEST_F(IpvsKernel, ErrorsMapToErrorCodes) {
  const Service s = svc(key(IPPROTO_TCP, "198.51.100.10", 80), "rr");
  const Destination d = dst("203.0.113.20", 8080, Forward::kMasq, 1);
  applyOk(Op{Op::Kind::kAddService, s, std::nullopt});
  applyOk(Op{Op::Kind::kAddDest, s, d});

  auto again = applyNow(Op{Op::Kind::kAddService, s, std::nullopt});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kAlreadyExists) << again.error().message;
  EXPECT_NE(again.error().message.find("tcp 198.51.100.10:80"), std::string::npos)
      << again.error().message;

  auto dest_again = applyNow(Op{Op::Kind::kAddDest, s, d});
  ASSERT_FALSE(dest_again);
  EXPECT_EQ(dest_again.error().code, ErrorCode::kAlreadyExists) << dest_again.error().message;
  EXPECT_NE(dest_again.error().message.find("203.0.113.20:8080"), std::string::npos)
      << dest_again.error().message;

  const Destination missing = dst("203.0.113.99", 8080, Forward::kMasq, 1);
  for (auto kind : {Op::Kind::kDelDest, Op::Kind::kEditDest}) {
    auto r = applyNow(Op{kind, s, missing});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kNotFound) << r.error().message;
    EXPECT_NE(r.error().message.find("203.0.113.99:8080"), std::string::npos) << r.error().message;
  }

  const Service gone = svc(key(IPPROTO_UDP, "2001:db8::99", 53), "rr");
  for (auto kind : {Op::Kind::kDelService, Op::Kind::kEditService}) {
    auto r = applyNow(Op{kind, gone, std::nullopt});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kNotFound) << r.error().message;
    EXPECT_NE(r.error().message.find("udp [2001:db8::99]:53"), std::string::npos)
        << r.error().message;
  }
  // A destination of a service that does not exist.
  auto orphan = applyNow(Op{Op::Kind::kAddDest, gone, dst("2001:db8::99", 53, Forward::kMasq, 1)});
  ASSERT_FALSE(orphan);
  EXPECT_EQ(orphan.error().code, ErrorCode::kNotFound) << orphan.error().message;

  // A scheduler the kernel does not have: not "re-dump and re-plan" but a bad setting, named.
  auto nosuch =
      applyNow(Op{Op::Kind::kAddService, svc(key(IPPROTO_TCP, "198.51.100.13", 80), "nosuch"), {}});
  ASSERT_FALSE(nosuch);
  EXPECT_EQ(nosuch.error().code, ErrorCode::kInvalidArgument) << nosuch.error().message;
  EXPECT_NE(nosuch.error().message.find("tcp 198.51.100.13:80"), std::string::npos)
      << nosuch.error().message;
  EXPECT_NE(nosuch.error().message.find("no scheduler \"nosuch\""), std::string::npos)
      << nosuch.error().message;
  expectReadBack({{s, {d}}});
}

TEST_F(IpvsKernel, TimeoutsReadBack) {
  const uint64_t before = g_kernel->writes();
  auto set = setTimeoutsNow(Timeouts{900, 120, 300});
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(g_kernel->writes() - before, 1u);
  EXPECT_EQ(lines(run("ipvsadm -Ln --timeout")),
            std::vector<std::string>{"Timeout (tcp tcpfin udp): 900 120 300"});
  auto got = timeoutsNow();
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(*got, (Timeouts{900, 120, 300}));
  // 0 leaves a timeout as it is.
  ASSERT_TRUE(setTimeoutsNow(Timeouts{0, 60, 0}));
  got = timeoutsNow();
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, (Timeouts{900, 60, 300}));
  EXPECT_EQ(lines(run("ipvsadm -Ln --timeout")),
            std::vector<std::string>{"Timeout (tcp tcpfin udp): 900 60 300"});
}

}  // namespace
}  // namespace tandem::resources::ipvs

int main(int argc, char** argv) {
  using namespace tandem::resources::ipvs;
  ::testing::InitGoogleTest(&argc, argv);
  using tandem::test::cannotRun;
  if (auto why = tandem::test::enterPrivateNetns("a network namespace and IPVS"); !why.empty()) {
    return cannotRun(why);
  }
  if (std::system("command -v ipvsadm >/dev/null") != 0) {
    return cannotRun("no ipvsadm (apt-get install ipvsadm): it is the independent reader");
  }
  auto loop = tandem::loop::QbDispatcher::create();
  if (!loop) return cannotRun("cannot create the event loop: " + loop.error().message);
  g_loop = loop->get();
  auto k = NetlinkKernel::open(**loop);
  if (!k) return cannotRun(k.error().message);
  const std::string setup =
      "ip link set lo up && ip link add dummy0 type dummy && ip link set dummy0 up && "
      "ip addr add 203.0.113.1/24 dev dummy0 && ip -6 addr add 2001:db8::1/64 dev dummy0 nodad";
  if (std::system(setup.c_str()) != 0) return cannotRun("cannot set up dummy0 in the namespace");
  g_kernel = k->get();
  // Which schedulers the kernel has: every one Debian's stock kernel builds must be there;
  // twos came with Linux 6.2.
  for (const char* s : {"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "fo",
                        "ovf", "mh", "twos"}) {
    Service probe = svc(key(IPPROTO_TCP, "198.51.100.99", 1), s);
    auto r = applyNow(Op{Op::Kind::kAddService, probe, std::nullopt});
    if (r) {
      g_schedulers.emplace_back(s);
      (void)applyNow(Op{Op::Kind::kDelService, probe, std::nullopt});
    } else if (std::string(s) == "twos") {
      std::cout << "note: this kernel has no twos scheduler (" << r.error().message << ")\n";
    } else {
      std::cout << "FAIL: the stock scheduler " << s << " is missing: " << r.error().message
                << "\n";
      return 1;
    }
  }
  std::cout << "family id " << g_kernel->familyId() << "; schedulers:";
  for (const auto& s : g_schedulers) std::cout << " " << s;
  std::cout << "\n";
  return RUN_ALL_TESTS();
}
