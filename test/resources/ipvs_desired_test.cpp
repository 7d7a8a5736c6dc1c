#include "ipvs/ipvs_desired.h"

#include <gtest/gtest.h>
#include <linux/ip_vs.h>
#include <netinet/in.h>

#include "ipvs/ipvs_codec.h"
#include "ipvs/ipvs_plan.h"

namespace tandem::resources::ipvs {
namespace {

using namespace std::chrono_literals;

Endpoint ep(const char* text) { return Endpoint::parse(text, true).value(); }
IpAddress ip(const char* text) { return *IpAddress::parse(text); }

config::RealServer real(const char* address, int weight = 1) {
  config::RealServer rs;
  rs.address = ep(address);
  rs.weight = weight;
  return rs;
}

config::VirtualServer web() {
  config::VirtualServer vs;
  vs.name = "web";
  vs.address = ep("198.51.100.10:80");
  vs.scheduler = "wrr";
  vs.real_servers = {real("198.51.100.21:80", 3), real("198.51.100.22:80", 5)};
  return vs;
}

config::Config configWith(std::vector<config::VirtualServer> vss) {
  config::Config cfg;
  cfg.virtual_servers = std::move(vss);
  return cfg;
}

const DestinationState* findDest(const ServiceState& s, const char* address) {
  for (const auto& d : s.destinations) {
    if (d.dest.key == DestKey{ep(address).address, ep(address).port}) return &d;
  }
  return nullptr;
}

TEST(IpvsDesired, AllUpWhenNothingIsKnown) {
  Table t = desiredTable(configWith({web()}), Health{});
  ASSERT_EQ(t.services.size(), 1u);
  const ServiceState& s = t.services[0];
  EXPECT_EQ(s.service.key.family, Family::kInet);
  EXPECT_EQ(s.service.key.protocol, IPPROTO_TCP);
  EXPECT_EQ(s.service.key.address, ip("198.51.100.10"));
  EXPECT_EQ(s.service.key.port, 80);
  EXPECT_EQ(s.service.key.fwmark, 0u);
  EXPECT_EQ(s.service.scheduler, "wrr");
  EXPECT_EQ(s.service.flags, 0u);
  EXPECT_EQ(s.service.timeout_s, 0u);
  EXPECT_EQ(s.service.netmask, 0u) << "0: the whole address, the codec's default";
  ASSERT_EQ(s.destinations.size(), 2u);
  EXPECT_EQ(s.destinations[0].dest.key.address, ip("198.51.100.21"));
  EXPECT_EQ(s.destinations[0].dest.weight, 3);
  EXPECT_EQ(s.destinations[0].dest.forward, Forward::kMasq);
  EXPECT_EQ(s.destinations[0].dest.family, Family::kInet);
  EXPECT_EQ(s.destinations[1].dest.weight, 5);
}

TEST(IpvsDesired, DownServerIsQuiescedWithWeightZero) {
  Health h;
  h.set("web", ep("198.51.100.22:80"), false);
  Table t = desiredTable(configWith({web()}), h);
  ASSERT_EQ(t.services[0].destinations.size(), 2u);
  EXPECT_EQ(findDest(t.services[0], "198.51.100.21:80")->dest.weight, 3);
  EXPECT_EQ(findDest(t.services[0], "198.51.100.22:80")->dest.weight, 0);
}

TEST(IpvsDesired, AnUpServerTakesTheWeightItsHealthSays) {
  Health h;
  h.set("web", ep("198.51.100.22:80"), true, 2);
  Table t = desiredTable(configWith({web()}), h);
  EXPECT_EQ(findDest(t.services[0], "198.51.100.21:80")->dest.weight, 3) << "configured";
  EXPECT_EQ(findDest(t.services[0], "198.51.100.22:80")->dest.weight, 2);
  h.set("web", ep("198.51.100.22:80"), false, 2);
  t = desiredTable(configWith({web()}), h);
  EXPECT_EQ(findDest(t.services[0], "198.51.100.22:80")->dest.weight, 0) << "down is 0";
}

TEST(IpvsDesired, DownServerIsLeftOutWithOnFailureRemove) {
  auto vs = web();
  vs.on_failure = config::OnFailure::kRemove;
  Health h;
  h.set("web", ep("198.51.100.22:80"), false);
  Table t = desiredTable(configWith({vs}), h);
  ASSERT_EQ(t.services[0].destinations.size(), 1u);
  EXPECT_NE(findDest(t.services[0], "198.51.100.21:80"), nullptr);
}

TEST(IpvsDesired, HealthOfAnotherVirtualServerDoesNotApply) {
  Health h;
  h.set("other", ep("198.51.100.22:80"), false);
  Table t = desiredTable(configWith({web()}), h);
  EXPECT_EQ(findDest(t.services[0], "198.51.100.22:80")->dest.weight, 5);
}

TEST(IpvsDesired, ServerBackUpGetsItsWeightBack) {
  Health h;
  h.set("web", ep("198.51.100.22:80"), false);
  h.set("web", ep("198.51.100.22:80"), true);
  Table t = desiredTable(configWith({web()}), h);
  EXPECT_EQ(findDest(t.services[0], "198.51.100.22:80")->dest.weight, 5);
}

TEST(IpvsDesired, FallbackTakesOverWhenAllAreDown) {
  auto vs = web();
  vs.fallback = Endpoint{ip("203.0.113.99"), 0};  // port 0: the service's
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  Table t = desiredTable(configWith({vs}), h);
  EXPECT_EQ(findDest(t.services[0], "203.0.113.99:80"), nullptr) << "one server is still up";

  h.set("web", ep("198.51.100.22:80"), false);
  t = desiredTable(configWith({vs}), h);
  ASSERT_EQ(t.services[0].destinations.size(), 3u);
  const auto* fb = findDest(t.services[0], "203.0.113.99:80");
  ASSERT_NE(fb, nullptr);
  EXPECT_EQ(fb->dest.weight, 1);
  EXPECT_EQ(findDest(t.services[0], "198.51.100.21:80")->dest.weight, 0);
}

TEST(IpvsDesired, FallbackAloneWhenAllAreDownAndRemoved) {
  auto vs = web();
  vs.on_failure = config::OnFailure::kRemove;
  vs.forwarding = config::Forwarding::kDr;
  vs.fallback = ep("203.0.113.99:8080");
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  h.set("web", ep("198.51.100.22:80"), false);
  Table t = desiredTable(configWith({vs}), h);
  ASSERT_EQ(t.services[0].destinations.size(), 1u);
  const Destination& d = t.services[0].destinations[0].dest;
  EXPECT_EQ(d.key.address, ip("203.0.113.99"));
  EXPECT_EQ(d.key.port, 8080);
  EXPECT_EQ(d.weight, 1);
  EXPECT_EQ(d.forward, Forward::kDirectRoute);
}

TEST(IpvsDesired, FallbackThatIsAlsoARealServerIsNotAddedTwice) {
  auto vs = web();
  vs.fallback = ep("198.51.100.22:80");
  Health h;
  h.set("web", ep("198.51.100.21:80"), false);
  h.set("web", ep("198.51.100.22:80"), false);
  Table t = desiredTable(configWith({vs}), h);
  ASSERT_EQ(t.services[0].destinations.size(), 2u);
  EXPECT_EQ(findDest(t.services[0], "198.51.100.22:80")->dest.weight, 1);
}

TEST(IpvsDesired, SchedulerFlagsMapToSchedBits) {
  auto vs = web();
  vs.scheduler = "sh";
  vs.scheduler_flags = {"fallback", "port"};
  EXPECT_EQ(desiredService(vs).flags,
            uint32_t{IP_VS_SVC_F_SCHED_SH_FALLBACK | IP_VS_SVC_F_SCHED_SH_PORT});
  vs.scheduler = "mh";
  vs.scheduler_flags = {"port"};
  EXPECT_EQ(desiredService(vs).flags, uint32_t{IP_VS_SVC_F_SCHED2});
  vs.scheduler_flags = {"fallback"};
  EXPECT_EQ(desiredService(vs).flags, uint32_t{IP_VS_SVC_F_SCHED1});
}

TEST(IpvsDesired, PersistenceSetsFlagTimeoutAndIpv4Mask) {
  auto vs = web();
  vs.persistence_timeout = 300s;
  vs.persistence_netmask = ip("255.255.255.0");
  Service s = desiredService(vs);
  EXPECT_EQ(s.flags, uint32_t{IP_VS_SVC_F_PERSISTENT});
  EXPECT_EQ(s.timeout_s, 300u);
  EXPECT_EQ(s.netmask, 0xffffff00u);
}

TEST(IpvsDesired, PersistenceTimeoutRoundsUpToWholeSeconds) {
  auto vs = web();
  vs.persistence_timeout = 1500ms;
  EXPECT_EQ(desiredService(vs).timeout_s, 2u);
  EXPECT_EQ(desiredService(vs).netmask, 0u);
  vs.persistence_netmask = ip("255.255.255.255");
  EXPECT_EQ(desiredService(vs).netmask, 0u) << "the whole address is the default";
}

TEST(IpvsDesired, Ipv6PersistenceNetmaskIsAPrefixLength) {
  auto vs = web();
  vs.address = ep("[2001:db8::10]:443");
  vs.persistence_timeout = 60s;
  IpAddress mask;
  mask.family = Family::kInet6;
  for (int i = 0; i < 8; ++i) mask.bytes[static_cast<size_t>(i)] = 0xff;  // /64
  vs.persistence_netmask = mask;
  Service s = desiredService(vs);
  EXPECT_EQ(s.key.family, Family::kInet6);
  EXPECT_EQ(s.netmask, 64u);
  vs.persistence_netmask.reset();
  EXPECT_EQ(desiredService(vs).netmask, 0u);
  for (auto& b : mask.bytes) b = 0xff;  // /128
  vs.persistence_netmask = mask;
  EXPECT_EQ(desiredService(vs).netmask, 0u);
}

TEST(IpvsDesired, OnePacketFlag) {
  auto vs = web();
  vs.protocol = config::Protocol::kUdp;
  vs.one_packet = true;
  Service s = desiredService(vs);
  EXPECT_EQ(s.key.protocol, IPPROTO_UDP);
  EXPECT_EQ(s.flags, uint32_t{IP_VS_SVC_F_ONEPACKET});
}

TEST(IpvsDesired, FwmarkServiceHasNoAddress) {
  config::VirtualServer vs;
  vs.name = "mark";
  vs.fwmark = 7;
  vs.fwmark_family = Family::kInet6;
  vs.real_servers = {real("[2001:db8::21]:80")};
  Service s = desiredService(vs);
  EXPECT_EQ(s.key.fwmark, 7u);
  EXPECT_EQ(s.key.family, Family::kInet6);
  EXPECT_EQ(s.key.protocol, 0);
  EXPECT_EQ(s.key.port, 0);
  EXPECT_EQ(s.key.address, IpAddress{});
  EXPECT_EQ(s.netmask, 0u);
}

TEST(IpvsDesired, ForwardingTunnelAndThresholds) {
  auto vs = web();
  vs.real_servers[0].forwarding = config::Forwarding::kTun;
  vs.real_servers[0].tunnel_type = config::TunnelType::kGue;
  vs.real_servers[0].tunnel_port = 6080;
  vs.real_servers[0].tunnel_checksum = true;
  vs.real_servers[0].upper_threshold = 100;
  vs.real_servers[0].lower_threshold = 50;
  vs.real_servers[1].forwarding = config::Forwarding::kDr;
  vs.real_servers[1].tunnel_type = config::TunnelType::kGre;  // ignored without tun
  vs.real_servers[1].tunnel_port = 9;
  Table t = desiredTable(configWith({vs}), Health{});
  const Destination& a = findDest(t.services[0], "198.51.100.21:80")->dest;
  EXPECT_EQ(a.forward, Forward::kTunnel);
  EXPECT_EQ(a.tunnel_type, Tunnel::kGue);
  EXPECT_EQ(a.tunnel_port, 6080);
  EXPECT_EQ(a.tunnel_flags, uint16_t{IP_VS_TUNNEL_ENCAP_FLAG_CSUM});
  EXPECT_EQ(a.upper_threshold, 100u);
  EXPECT_EQ(a.lower_threshold, 50u);
  const Destination& b = findDest(t.services[0], "198.51.100.22:80")->dest;
  EXPECT_EQ(b.forward, Forward::kDirectRoute);
  EXPECT_EQ(b.tunnel_type, Tunnel::kIpip);
  EXPECT_EQ(b.tunnel_port, 0);
  EXPECT_EQ(b.tunnel_flags, 0);
}

TEST(IpvsDesired, GreTunnelHasNoPort) {
  auto vs = web();
  vs.real_servers[0].forwarding = config::Forwarding::kTun;
  vs.real_servers[0].tunnel_type = config::TunnelType::kGre;
  vs.real_servers[0].tunnel_port = 6080;
  Table t = desiredTable(configWith({vs}), Health{});
  const Destination& a = findDest(t.services[0], "198.51.100.21:80")->dest;
  EXPECT_EQ(a.tunnel_type, Tunnel::kGre);
  EXPECT_EQ(a.tunnel_port, 0);
}

TEST(IpvsDesired, ServicesAndDestinationsInKeyOrderFirstDuplicateWins) {
  auto a = web();
  a.address = ep("198.51.100.11:80");
  a.real_servers = {real("198.51.100.23:80", 2), real("198.51.100.21:80", 4),
                    real("198.51.100.23:80", 9)};
  auto b = web();  // 198.51.100.10:80
  auto dup = web();
  dup.name = "dup";
  dup.scheduler = "rr";
  Table t = desiredTable(configWith({a, b, dup}), Health{});
  ASSERT_EQ(t.services.size(), 2u);
  EXPECT_EQ(t.services[0].service.key.address, ip("198.51.100.10"));
  EXPECT_EQ(t.services[0].service.scheduler, "wrr");
  ASSERT_EQ(t.services[1].destinations.size(), 2u);
  EXPECT_EQ(t.services[1].destinations[0].dest.key.address, ip("198.51.100.21"));
  EXPECT_EQ(t.services[1].destinations[1].dest.weight, 2);
}

// Services and destinations, without the counters a desired table never has.
bool sameTable(const Table& a, const Table& b) {
  return std::equal(a.services.begin(), a.services.end(), b.services.begin(), b.services.end(),
                    [](const ServiceState& x, const ServiceState& y) {
                      return x.service == y.service &&
                             std::equal(x.destinations.begin(), x.destinations.end(),
                                        y.destinations.begin(), y.destinations.end(),
                                        [](const DestinationState& p, const DestinationState& q) {
                                          return p.dest == q.dest;
                                        });
                    });
}

// The health path rebuilds one service; whatever the change, the table must be the one a whole
// rebuild makes, and "changed" must say whether it differs.
TEST(IpvsDesired, UpdatingOneServiceMatchesAWholeRebuild) {
  std::vector<config::VirtualServer> vss;
  for (int i = 0; i < 12; ++i) {
    auto vs = web();
    vs.name = "vs" + std::to_string(i);
    // vs11 has vs3's key: the table keeps vs3's.
    const int port = i == 11 ? 83 : 80 + i;
    vs.address = ep(("198.51.100.10:" + std::to_string(port)).c_str());
    vs.on_failure = i % 2 ? config::OnFailure::kRemove : config::OnFailure::kQuiescent;
    vs.real_servers.clear();
    for (int j = 0; j < 3; ++j) {
      vs.real_servers.push_back(
          real(("203.0.113." + std::to_string(10 + j) + ":80").c_str(), 2 + j));
    }
    if (i % 3 == 0) vs.real_servers.push_back(real("203.0.113.10:80", 9));  // a duplicate
    if (i % 4 == 0) vs.fallback = ep("203.0.113.99:80");
    if (i == 8) vs.fallback = ep("203.0.113.11:80");  // the fallback is a real server
    vss.push_back(vs);
  }
  const config::Config cfg = configWith(vss);
  Health h;
  Table t = desiredTable(cfg, h);
  uint32_t seed = 12345;
  auto next = [&seed](uint32_t n) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 16) % n;
  };
  int changes = 0;
  for (int step = 0; step < 2000; ++step) {
    const auto& vs = cfg.virtual_servers[next(12)];
    const auto& rs = vs.real_servers[next(static_cast<uint32_t>(vs.real_servers.size()))];
    const uint32_t what = next(4);
    std::optional<int> weight;
    if (what == 2) weight = static_cast<int>(next(5));
    h.set(vs.name, rs.address, what != 0, weight);
    const Table whole = desiredTable(cfg, h);
    const bool differs = !sameTable(t, whole);
    const bool changed = updateDesired(t, cfg, h, vs.name);
    ASSERT_EQ(changed, differs) << "step " << step << " " << vs.name;
    ASSERT_TRUE(sameTable(t, whole)) << "step " << step << " " << vs.name;
    changes += changed ? 1 : 0;
  }
  EXPECT_GT(changes, 200) << "the walk must change the table often to mean anything";
  EXPECT_FALSE(updateDesired(t, cfg, h, "nobody"));
}

TEST(IpvsDesired, UpdatingTheSecondServerOfAKeyChangesNothing) {
  auto first = web();
  auto second = web();
  second.name = "second";
  const config::Config cfg = configWith({first, second});
  Health h;
  Table t = desiredTable(cfg, h);
  h.set("second", ep("198.51.100.21:80"), false);
  EXPECT_FALSE(updateDesired(t, cfg, h, "second"));
  EXPECT_EQ(findDest(t.services[0], "198.51.100.21:80")->dest.weight, 3);
}

TEST(IpvsDesired, TimeoutsInWholeSeconds) {
  config::Ipvs ipvs;
  EXPECT_EQ(desiredTimeouts(ipvs), Timeouts{});
  ipvs.tcp_timeout = 900s;
  ipvs.udp_timeout = 2500ms;
  EXPECT_EQ(desiredTimeouts(ipvs), (Timeouts{900, 0, 3}));
}

}  // namespace
}  // namespace tandem::resources::ipvs

namespace tandem::resources::ipvs {
namespace {

// The desired table is written by the codec and read back as a dump would read it: every
// request encodes (the codec's checks accept what desiredTable makes), and the decoded table
// plans to nothing against the desired one. Catches the two halves disagreeing on a
// convention (netmask 0, flags, tunnel fields, fwmark keys).
TEST(IpvsDesired, SurvivesTheCodecUnchanged) {
  auto vs4 = web();
  vs4.persistence_timeout = 300s;
  vs4.persistence_netmask = ip("255.255.255.0");
  vs4.real_servers[0].forwarding = config::Forwarding::kTun;
  vs4.real_servers[0].tunnel_type = config::TunnelType::kGue;
  vs4.real_servers[0].tunnel_port = 6080;
  vs4.real_servers[0].tunnel_checksum = true;
  vs4.real_servers[1].forwarding = config::Forwarding::kDr;
  vs4.real_servers[1].upper_threshold = 100;
  auto vs6 = web();
  vs6.name = "web6";
  vs6.address = ep("[2001:db8::10]:443");
  vs6.real_servers = {real("[2001:db8::21]:443", 2)};
  auto udp = web();
  udp.name = "dns";
  udp.address = ep("198.51.100.11:53");
  udp.protocol = config::Protocol::kUdp;
  udp.one_packet = true;
  udp.scheduler = "sh";
  udp.scheduler_flags = {"fallback", "port"};
  udp.real_servers = {real("198.51.100.31:53", 1)};
  config::VirtualServer mark;
  mark.name = "mark";
  mark.fwmark = 7;
  mark.fwmark_family = Family::kInet6;
  mark.persistence_timeout = 60s;
  mark.real_servers = {real("2001:db8::22", 1)};
  Health h;
  h.set("web", ep("198.51.100.22:80"), false);
  const Table desired = desiredTable(configWith({vs4, vs6, udp, mark}), h);

  constexpr uint16_t kFamilyId = 0x20;
  Table decoded;
  uint32_t seq = 1;
  for (const Op& op : plan(desired, Table{}, false)) {
    auto bytes = codec::encodeOp(kFamilyId, op, seq++);
    ASSERT_TRUE(bytes) << bytes.error().message;
    auto msgs = codec::decode(*bytes, kFamilyId);
    ASSERT_TRUE(msgs) << msgs.error().message;
    ASSERT_EQ(msgs->size(), 1u);
    const auto& m = msgs->front();
    if (op.kind == Op::Kind::kAddService) {
      ASSERT_EQ(m.kind, codec::Message::Kind::kService);
      decoded.services.push_back(m.service);
    } else {
      ASSERT_EQ(m.kind, codec::Message::Kind::kDest);
      ASSERT_FALSE(decoded.services.empty());
      decoded.services.back().destinations.push_back(m.dest);
    }
  }
  ASSERT_EQ(decoded.services.size(), 4u);
  const auto again = plan(desired, decoded, true);
  EXPECT_TRUE(again.empty()) << again.size() << " ops, first on "
                             << (again.empty() ? "" : again[0].service.key.toString());
}

}  // namespace
}  // namespace tandem::resources::ipvs
