#include "ipvs/ipvs_desired.h"

#include <linux/ip_vs.h>
#include <netinet/in.h>

#include <algorithm>
#include <set>

namespace tandem::resources::ipvs {

void Health::set(std::string_view virtual_server, const Endpoint& real_server, bool up,
                 std::optional<int> weight) {
  state_[{std::string(virtual_server), real_server}] = RealHealth{up, weight};
}

bool Health::up(std::string_view virtual_server, const Endpoint& real_server) const {
  return get(virtual_server, real_server).up;
}

RealHealth Health::get(std::string_view virtual_server, const Endpoint& real_server) const {
  auto it = state_.find({std::string(virtual_server), real_server});
  return it == state_.end() ? RealHealth{} : it->second;
}

namespace {

uint16_t protocolNumber(config::Protocol p) {
  switch (p) {
    case config::Protocol::kTcp:
      return IPPROTO_TCP;
    case config::Protocol::kUdp:
      return IPPROTO_UDP;
    case config::Protocol::kSctp:
      return IPPROTO_SCTP;
  }
  return IPPROTO_TCP;
}

Forward forwardOf(config::Forwarding f) {
  switch (f) {
    case config::Forwarding::kNat:
      return Forward::kMasq;
    case config::Forwarding::kDr:
      return Forward::kDirectRoute;
    case config::Forwarding::kTun:
      return Forward::kTunnel;
  }
  return Forward::kMasq;
}

Tunnel tunnelOf(config::TunnelType t) {
  switch (t) {
    case config::TunnelType::kIpip:
      return Tunnel::kIpip;
    case config::TunnelType::kGue:
      return Tunnel::kGue;
    case config::TunnelType::kGre:
      return Tunnel::kGre;
  }
  return Tunnel::kIpip;
}

uint32_t ceilSeconds(Millis d) {
  const auto ms = d.count();
  if (ms <= 0) return 0;
  return static_cast<uint32_t>((ms + 999) / 1000);
}

// IPv4: the mask as a host-order integer, as IPVS_SVC_ATTR_NETMASK carries it.
uint32_t ipv4Mask(const IpAddress& a) {
  return (uint32_t{a.bytes[0]} << 24) | (uint32_t{a.bytes[1]} << 16) | (uint32_t{a.bytes[2]} << 8) |
         uint32_t{a.bytes[3]};
}

// Tunnel fields only mean something with tunnel forwarding; elsewhere they stay zero so they
// compare equal to what a kernel without tunnel attributes dumps.
Destination destination(const config::RealServer& rs, int32_t weight) {
  Destination d;
  d.key = DestKey{rs.address.address, rs.address.port};
  d.family = rs.address.address.family;
  d.forward = forwardOf(rs.forwarding);
  d.weight = weight;
  d.upper_threshold = rs.upper_threshold;
  d.lower_threshold = rs.lower_threshold;
  if (rs.forwarding == config::Forwarding::kTun) {
    d.tunnel_type = tunnelOf(rs.tunnel_type);
    if (rs.tunnel_type == config::TunnelType::kGue) d.tunnel_port = rs.tunnel_port;
    if (rs.tunnel_checksum) d.tunnel_flags = IP_VS_TUNNEL_ENCAP_FLAG_CSUM;
  }
  return d;
}

}  // namespace

Service desiredService(const config::VirtualServer& vs) {
  Service s;
  if (vs.fwmark) {
    s.key.family = vs.fwmark_family;
    s.key.fwmark = *vs.fwmark;  // address stays default: the kernel dumps none for a mark
  } else if (vs.address) {
    s.key.family = vs.address->address.family;
    s.key.protocol = protocolNumber(vs.protocol);
    s.key.address = vs.address->address;
    s.key.port = vs.address->port;
  }
  s.scheduler = vs.scheduler;
  for (const auto& f : vs.scheduler_flags) {
    // sh and mh name the same two bits: IP_VS_SVC_F_SCHED_{SH,MH}_{FALLBACK,PORT}.
    if (f == "fallback") s.flags |= IP_VS_SVC_F_SCHED1;
    if (f == "port") s.flags |= IP_VS_SVC_F_SCHED2;
  }
  if (vs.one_packet) s.flags |= IP_VS_SVC_F_ONEPACKET;
  if (vs.persistence_timeout > Millis(0)) {
    s.flags |= IP_VS_SVC_F_PERSISTENT;
    s.timeout_s = ceilSeconds(vs.persistence_timeout);
    // The model's netmask 0 is the whole address (255.255.255.255, /128), the codec's default
    // both ways; a real mask is kept only when it groups clients.
    if (vs.persistence_netmask) {
      if (s.key.family == Family::kInet6) {
        const int len = netmaskLength(*vs.persistence_netmask).value_or(128);
        s.netmask = len == 128 ? 0 : static_cast<uint32_t>(len);
      } else {
        const uint32_t mask = ipv4Mask(*vs.persistence_netmask);
        s.netmask = mask == 0xffffffffu ? 0 : mask;
      }
    }
  }
  return s;
}

namespace {

// The destinations of vs given health, in key order (desiredTable's rules).
std::vector<DestinationState> desiredDestinations(const config::VirtualServer& vs,
                                                  const ServiceKey& service, const Health& health) {
  std::vector<DestinationState> out;
  std::set<DestKey> dests;
  bool any_up = false;
  for (const auto& rs : vs.real_servers) {
    const DestKey key{rs.address.address, rs.address.port};
    if (!dests.insert(key).second) continue;
    const RealHealth h = health.get(vs.name, rs.address);
    const bool drained = health.drained(service, key);
    any_up = any_up || (h.up && !drained);
    if (!h.up && vs.on_failure == config::OnFailure::kRemove) continue;
    const int weight = h.up && !drained ? h.weight.value_or(rs.weight) : 0;
    out.push_back(DestinationState{destination(rs, weight), 0, 0, 0, {}});
  }
  if (!any_up && vs.fallback) {
    config::RealServer fb;
    fb.address = *vs.fallback;
    if (fb.address.port == 0 && vs.address) fb.address.port = vs.address->port;
    fb.forwarding = vs.forwarding;
    const DestKey key{fb.address.address, fb.address.port};
    Destination d = destination(fb, 1);
    auto same = std::find_if(out.begin(), out.end(),
                             [&](const DestinationState& ds) { return ds.dest.key == key; });
    if (same != out.end()) {
      // The fallback is one of the (down) real servers; a drained one stays at 0.
      if (!health.drained(service, key)) same->dest.weight = 1;
    } else {
      out.push_back(DestinationState{d, 0, 0, 0, {}});
    }
  }
  std::sort(out.begin(), out.end(), [](const DestinationState& a, const DestinationState& b) {
    return a.dest.key < b.dest.key;
  });
  return out;
}

bool sameDestinations(const std::vector<DestinationState>& a,
                      const std::vector<DestinationState>& b) {
  return std::equal(
      a.begin(), a.end(), b.begin(), b.end(),
      [](const DestinationState& x, const DestinationState& y) { return x.dest == y.dest; });
}

}  // namespace

Table desiredTable(const config::Config& cfg, const Health& health) {
  Table table;
  std::set<ServiceKey> seen;
  for (const auto& vs : cfg.virtual_servers) {
    ServiceState st;
    st.service = desiredService(vs);
    if (!seen.insert(st.service.key).second) continue;
    st.destinations = desiredDestinations(vs, st.service.key, health);
    table.services.push_back(std::move(st));
  }
  std::sort(
      table.services.begin(), table.services.end(),
      [](const ServiceState& a, const ServiceState& b) { return a.service.key < b.service.key; });
  return table;
}

bool updateDesired(Table& table, const config::Config& cfg, const Health& health,
                   std::string_view vs_name) {
  const auto& all = cfg.virtual_servers;
  auto vs = std::find_if(all.begin(), all.end(),
                         [&](const config::VirtualServer& v) { return v.name == vs_name; });
  if (vs == all.end()) return false;
  const ServiceKey key = desiredService(*vs).key;
  // The table holds the first virtual server of each key.
  for (auto before = all.begin(); before != vs; ++before) {
    if (desiredService(*before).key == key) return false;
  }
  auto pos = std::lower_bound(
      table.services.begin(), table.services.end(), key,
      [](const ServiceState& s, const ServiceKey& k) { return s.service.key < k; });
  if (pos == table.services.end() || !(pos->service.key == key)) return false;
  std::vector<DestinationState> next = desiredDestinations(*vs, key, health);
  if (sameDestinations(pos->destinations, next)) return false;
  pos->destinations = std::move(next);
  return true;
}

Timeouts desiredTimeouts(const config::Ipvs& ipvs) {
  return Timeouts{ceilSeconds(ipvs.tcp_timeout), ceilSeconds(ipvs.tcpfin_timeout),
                  ceilSeconds(ipvs.udp_timeout)};
}

}  // namespace tandem::resources::ipvs
