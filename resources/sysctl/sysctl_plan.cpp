#include "sysctl/sysctl_plan.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

namespace tandem::resources::sysctl {

namespace {

constexpr const char* kPersist = ", and persist it in /etc/sysctl.d/";

std::optional<long> asNumber(const std::string& text) {
  long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string joined(const std::set<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string forwardingName(config::Forwarding f) {
  switch (f) {
    case config::Forwarding::kNat:
      return "nat";
    case config::Forwarding::kDr:
      return "dr";
    case config::Forwarding::kTun:
      return "tun";
  }
  return "?";
}

// The services that send traffic with forwarding f to a real server of family fam.
std::set<std::string> servicesUsing(const config::Config& config, config::Forwarding f,
                                    Family fam) {
  std::set<std::string> out;
  for (const auto& vs : config.virtual_servers) {
    for (const auto& rs : vs.real_servers) {
      if (rs.forwarding == f && rs.address.address.family == fam) out.insert(vs.name);
    }
  }
  return out;
}

// A boolean the director needs on: a warning when it is off or unreadable.
void needOn(const SysctlReader& reader, const std::string& key, const std::string& purpose,
            const std::string& why, const std::string& extra_fix,
            const std::set<std::string>& services, std::vector<SysctlFinding>& out) {
  if (services.empty()) return;
  SysctlFinding f;
  f.key = key;
  f.required = "1";
  f.purpose = purpose;
  f.why = why;
  f.context = "svc=" + joined(services, ",");
  auto value = reader.read(key);
  if (value) {
    auto n = asNumber(*value);
    if (n && *n != 0) return;
    f.current = *value;
    f.settable = true;
  } else {
    // Unreadable: IPv6 disabled (no net.ipv6), or /proc not mounted. Setting it cannot work.
    f.why += "; the setting cannot be read (" + value.error().message + ")";
  }
  f.fix = "sysctl -w " + key + "=1" + kPersist + extra_fix;
  out.push_back(std::move(f));
}

// The interfaces of this node that carry an IPv4 VIP.
std::set<std::string> ipv4VipInterfaces(const config::Config& config,
                                        std::span<const std::string> node_interfaces) {
  std::set<std::string> out;
  for (const auto& vip : config.vips) {
    if (vip.address.address.family != Family::kInet) continue;
    if (std::find(node_interfaces.begin(), node_interfaces.end(), vip.interface) ==
        node_interfaces.end()) {
      continue;
    }
    out.insert(vip.interface);
  }
  return out;
}

void checkArpIgnore(const config::Config& config, std::span<const std::string> node_interfaces,
                    const SysctlReader& reader, std::vector<SysctlFinding>& out) {
  std::set<std::string> ifaces = ipv4VipInterfaces(config, node_interfaces);
  if (ifaces.empty()) return;
  const std::string all_key = "net.ipv4.conf.all.arp_ignore";
  auto all = reader.read(all_key);
  std::optional<long> all_value = all ? asNumber(*all) : std::nullopt;
  std::set<std::string> silent_via_all;
  for (const auto& ifname : ifaces) {
    std::string key = sysctlKey({"net", "ipv4", "conf", ifname, "arp_ignore"});
    auto dev = reader.read(key);
    // An interface that does not exist yet is the VIP resource's to report.
    std::optional<long> dev_value = dev ? asNumber(*dev) : std::nullopt;
    if (dev_value && *dev_value == 8) {
      SysctlFinding f;
      f.key = key;
      f.current = *dev;
      f.required = "0";
      f.purpose = "answering ARP for the VIPs on " + ifname;
      f.why = "arp_ignore=8 makes this director answer no ARP request on " + ifname +
              ", so neighbours lose the VIPs there when their cache entries expire; 0 or 1 both "
              "answer for addresses on the interface";
      f.fix = "sysctl -w " + key + "=0" + kPersist;
      f.context = "interface=" + ifname;
      out.push_back(std::move(f));
    }
    if (all_value && *all_value == 8) silent_via_all.insert(ifname);
  }
  if (!silent_via_all.empty()) {
    SysctlFinding f;
    f.key = all_key;
    f.current = *all;
    f.required = "0";
    f.purpose = "answering ARP for the VIPs on " + joined(silent_via_all, ", ");
    f.why =
        "the larger of conf.all and conf.IF arp_ignore applies, and 8 makes this director answer "
        "no ARP request, so neighbours lose the VIPs when their cache entries expire";
    f.fix = "sysctl -w " + all_key + "=0 (1 is fine too)" + kPersist;
    f.context = "interface=" + joined(silent_via_all, ",");
    out.push_back(std::move(f));
  }
}

// Connection sync ([sync] enabled): what the kernel sends the backup. A connection is sent once
// it has had sync_threshold packets, again every sync_period packets, and, with a
// sync_refresh_period, whenever its timer moved that many seconds since the last send. A
// backup's entry expires after the connection's timeout (15 min for an established TCP one),
// so a long-lived connection that carries fewer than sync_period packets in that time (a quiet
// session, keepalives only) is gone from the backup by the time it takes over.
void checkSync(const config::Config& config, const SysctlReader& reader,
               std::vector<SysctlFinding>& out) {
  if (!config.sync.enabled) return;
  const std::string context = "sync_id=" + std::to_string(config.sync.sync_id);
  auto number = [&reader](const std::string& key) -> std::optional<long> {
    auto v = reader.read(key);
    return v ? asNumber(*v) : std::nullopt;
  };
  if (auto version = number("net.ipv4.vs.sync_version"); version && *version == 0) {
    SysctlFinding f;
    f.key = "net.ipv4.vs.sync_version";
    f.current = "0";
    f.required = "1";
    f.settable = true;
    f.purpose = "connection sync";
    f.why =
        "version 0 messages carry no timeouts (the backup expires synced connections on its "
        "own timers) and no IPv6 connections";
    f.fix = "sysctl -w net.ipv4.vs.sync_version=1 on every director" + std::string(kPersist);
    f.context = context;
    out.push_back(std::move(f));
  }
  const std::string key = "net.ipv4.vs.sync_refresh_period";
  auto refresh = reader.read(key);
  auto refresh_s = refresh ? asNumber(*refresh) : std::nullopt;
  if (!refresh_s || *refresh_s != 0) return;
  // The threshold is "THRESHOLD\tPERIOD".
  long period = 50;
  if (auto t = reader.read("net.ipv4.vs.sync_threshold")) {
    std::istringstream in(*t);
    long threshold = 0, p = 0;
    if (in >> threshold >> p) period = p;
  }
  SysctlFinding f;
  f.key = key;
  f.current = *refresh;
  f.required = "60";
  f.settable = true;
  f.purpose = "connection sync of long-lived quiet sessions";
  f.why = period == 0
              ? "with sync_period 0 each connection is sent to the backup once, and its entry "
                "there expires after the connection's timeout however long it lives here"
              : "a connection is sent again only every " + std::to_string(period) +
                    " packets, so a session quieter than that per connection timeout (15 min "
                    "established) has expired on the backup when it takes over";
  f.fix = "sysctl -w " + key +
          "=60 on every director (a connection is then sent again at most "
          "once a minute while it carries traffic)" +
          std::string(kPersist);
  f.context = context;
  out.push_back(std::move(f));
}

// What a tun real server needs to decapsulate: the tunnel device and how to get it.
struct TunnelDevice {
  std::string name;
  std::string setup;
};

TunnelDevice tunnelDevice(const config::RealServer& rs, Family inner) {
  bool outer_v4 = rs.address.address.family == Family::kInet;
  switch (rs.tunnel_type) {
    case config::TunnelType::kGre:
      return outer_v4 ? TunnelDevice{"gre0", "modprobe ip_gre"}
                      : TunnelDevice{"ip6gre0", "modprobe ip6_gre"};
    case config::TunnelType::kGue: {
      TunnelDevice d = outer_v4 ? (inner == Family::kInet ? TunnelDevice{"tunl0", "modprobe ipip"}
                                                          : TunnelDevice{"sit0", "modprobe sit"})
                                : TunnelDevice{"ip6tnl0", "modprobe ip6_tunnel"};
      d.setup += " && ip fou add port " + std::to_string(rs.tunnel_port) + " gue" +
                 (outer_v4 ? "" : " -6");
      return d;
    }
    case config::TunnelType::kIpip:
      break;
  }
  if (!outer_v4) return {"ip6tnl0", "modprobe ip6_tunnel"};
  if (inner == Family::kInet) return {"tunl0", "modprobe ipip"};
  return {"sit0", "modprobe sit"};
}

struct GuidanceKey {
  IpAddress address;
  config::Forwarding forwarding;
  config::TunnelType tunnel_type;
  uint16_t tunnel_port;
  Family inner;
  auto operator<=>(const GuidanceKey&) const = default;
};

struct Guidance {
  const config::RealServer* rs = nullptr;
  std::set<std::string> vips;
  std::set<std::string> services;
};

std::string vipText(const config::VirtualServer& vs) {
  if (vs.address) {
    const IpAddress& a = vs.address->address;
    return a.toString() + (a.family == Family::kInet ? "/32" : "/128");
  }
  return "the addresses firewall mark " + std::to_string(vs.fwmark.value_or(0)) + " matches";
}

SysctlFinding guidanceNote(const GuidanceKey& key, const Guidance& g) {
  SysctlFinding f;
  f.severity = LogLevel::kNotice;
  f.purpose = "real server " + key.address.toString();
  std::string vips = joined(g.vips, ", ");
  std::string mode = forwardingName(key.forwarding);
  f.why = mode +
          " forwarding: the director sends the clients' packets for the VIP to this server "
          "unchanged" +
          (key.forwarding == config::Forwarding::kTun ? " inside a tunnel" : "") +
          ", and it must accept them as its own yet never claim the VIP on the shared network; "
          "the director cannot check another host's kernel";
  std::string arp =
      "net.ipv4.conf.all.arp_ignore=1 and net.ipv4.conf.all.arp_announce=2 (so it answers no "
      "ARP request for the VIP and never uses it as an ARP source)";
  std::string ndp =
      "no ARP settings apply to IPv6: Linux answers neighbour solicitations only for addresses "
      "on the interface they arrive on";
  if (key.forwarding == config::Forwarding::kDr) {
    f.fix = "on that server: add " + vips + " to lo (or a dummy interface), and " +
            (key.inner == Family::kInet ? "set " + arp : ndp);
  } else {
    TunnelDevice dev = tunnelDevice(*g.rs, key.inner);
    f.fix = "on that server: " + dev.setup + ", ip link set " + dev.name + " up, add " + vips +
            " to " + dev.name + " or lo, and ";
    if (key.inner == Family::kInet) {
      f.fix += "set net.ipv4.conf.all.rp_filter and net.ipv4.conf." + dev.name +
               ".rp_filter to 0 or 2 (strict reverse-path filtering drops the decapsulated "
               "packets, whose source is the client, arriving on " +
               dev.name + "); if it shares a network with the VIP, also set " + arp;
    } else {
      f.fix += "allow the decapsulated packets in any IPv6 reverse-path filter rule; " + ndp;
    }
  }
  f.context = "svc=" + joined(g.services, ",") + " forwarding=" + mode;
  return f;
}

void realServerGuidance(const config::Config& config, std::vector<SysctlFinding>& out) {
  std::map<GuidanceKey, Guidance> notes;
  for (const auto& vs : config.virtual_servers) {
    for (const auto& rs : vs.real_servers) {
      if (rs.forwarding == config::Forwarding::kNat) continue;
      bool tun = rs.forwarding == config::Forwarding::kTun;
      GuidanceKey key{rs.address.address, rs.forwarding,
                      tun ? rs.tunnel_type : config::TunnelType::kIpip,
                      tun ? rs.tunnel_port : uint16_t{0}, vs.family()};
      Guidance& g = notes[key];
      if (g.rs == nullptr) g.rs = &rs;
      g.vips.insert(vipText(vs));
      g.services.insert(vs.name);
    }
  }
  for (const auto& [key, g] : notes) out.push_back(guidanceNote(key, g));
}

}  // namespace

std::vector<SysctlFinding> sysctlPlan(const config::Config& config,
                                      std::span<const std::string> node_interfaces,
                                      const SysctlReader& current) {
  std::vector<SysctlFinding> out;
  needOn(current, "net.ipv4.ip_forward", "nat forwarding",
         "replies from the real servers are routed through the director, which must forward them",
         "", servicesUsing(config, config::Forwarding::kNat, Family::kInet), out);
  needOn(current, "net.ipv6.conf.all.forwarding", "nat forwarding",
         "replies from the IPv6 real servers are routed through the director, which must "
         "forward them",
         " (forwarding on makes interfaces ignore router advertisements unless their accept_ra "
         "is 2: set that first where addresses or routes come from them)",
         servicesUsing(config, config::Forwarding::kNat, Family::kInet6), out);
  checkArpIgnore(config, node_interfaces, current, out);
  checkSync(config, current, out);
  realServerGuidance(config, out);
  return out;
}

std::string describe(const SysctlFinding& f) {
  if (f.severity == LogLevel::kNotice) {
    return "sysctl guidance for " + f.purpose + ": " + f.why + "; " + f.fix + " " + f.context;
  }
  std::string now = f.current.empty() ? "unreadable" : f.current;
  return "sysctl " + f.key + "=" + now + " but " + f.purpose + " needs " + f.required + ": " +
         f.why + "; fix: " + f.fix + " " + f.context;
}

}  // namespace tandem::resources::sysctl
