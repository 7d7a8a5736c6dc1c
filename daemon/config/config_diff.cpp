#include "config/config_diff.h"

#include <algorithm>
#include <map>

#include "common/text.h"

namespace tandem::config {

namespace {

std::string failbackName(FailbackPolicy p) {
  switch (p) {
    case FailbackPolicy::kAuto:
      return "auto";
    case FailbackPolicy::kManual:
      return "manual";
    case FailbackPolicy::kDelayed:
      return "delayed";
  }
  return "?";
}

std::string vipName(const Vip& v) {
  return v.address.toString() + " on " + v.interface + (v.label.empty() ? "" : " label " + v.label);
}

std::string joinAddresses(const std::vector<IpAddress>& a) {
  std::string out = "[";
  for (size_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + a[i].toString();
  return out + "]";
}

std::string commandText(const std::optional<Command>& c) {
  if (!c) return "none";
  std::string out;
  for (size_t i = 0; i < c->argv.size(); ++i) out += (i ? " " : "") + c->argv[i];
  return quote(out);
}

class Collector {
 public:
  void refuse(std::string key, std::string running, std::string next, std::string why) {
    diff_.refused.push_back(
        Refusal{std::move(key), std::move(running), std::move(next), std::move(why)});
  }
  void change(std::string_view section, std::string detail) {
    details_[std::string(section)].push_back(std::move(detail));
  }
  template <typename T, typename Show>
  void compare(std::string_view section, std::string_view key, const T& a, const T& b, Show show) {
    if (!(a == b)) change(section, std::string(key) + " " + show(a) + " -> " + show(b));
  }
  ReloadDiff finish() {
    for (std::string_view s : kSections) {
      auto it = details_.find(std::string(s));
      if (it != details_.end()) diff_.changes.push_back(SectionChange{it->first, it->second});
    }
    return std::move(diff_);
  }

 private:
  ReloadDiff diff_;
  std::map<std::string, std::vector<std::string>> details_;
};

auto showDuration = [](Millis d) { return formatDuration(d); };
auto showInt = [](auto v) { return std::to_string(v); };

void diffCluster(const Cluster& a, const Cluster& b, Collector& c) {
  if (a.name != b.name) {
    c.refuse("cluster.name", quote(a.name), quote(b.name),
             "every frame is signed for the cluster's name; the peers would reject this node");
  }
  if (a.group != b.group) {
    c.refuse("cluster.group", quote(a.group), quote(b.group),
             "the CPG group is joined once, at start");
  }
  if (a.heartbeat_port != b.heartbeat_port) {
    c.refuse("cluster.heartbeat_port", std::to_string(a.heartbeat_port),
             std::to_string(b.heartbeat_port),
             "the peers send to the running port until they restart too");
  }
  constexpr std::string_view s = "cluster";
  if (!(a.keys == b.keys)) {
    std::vector<std::string> ids_a, ids_b;
    for (const auto& k : a.keys) ids_a.push_back(std::to_string(k.id));
    for (const auto& k : b.keys) ids_b.push_back(std::to_string(k.id));
    auto join = [](const std::vector<std::string>& v) {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
      return out + "]";
    };
    c.change(s, "keys " + join(ids_a) + " -> " + join(ids_b));
  }
  c.compare(s, "active_key", a.active_key, b.active_key, showInt);
  c.compare(s, "heartbeat_interval", a.heartbeat_interval, b.heartbeat_interval, showDuration);
  c.compare(s, "dead_time", a.dead_time, b.dead_time, showDuration);
  c.compare(s, "group_heartbeat_interval", a.group_heartbeat_interval, b.group_heartbeat_interval,
            showDuration);
  c.compare(s, "failback", a.failback, b.failback, failbackName);
  c.compare(s, "failback_delay", a.failback_delay, b.failback_delay, showDuration);
  c.compare(s, "no_quorum_policy", a.no_quorum_policy, b.no_quorum_policy,
            [](NoQuorumPolicy p) { return p == NoQuorumPolicy::kIgnore ? "ignore" : "stop"; });
  c.compare(s, "quorum_hold", a.quorum_hold, b.quorum_hold, showDuration);
  if (!(a.tiebreaker == b.tiebreaker)) {
    c.change(s, "tiebreaker " + joinAddresses(a.tiebreaker.targets) + " every " +
                    formatDuration(a.tiebreaker.interval) + " -> " +
                    joinAddresses(b.tiebreaker.targets) + " every " +
                    formatDuration(b.tiebreaker.interval));
  }
  if (!(a.fence == b.fence)) {
    c.change(s, "fence " + commandText(a.fence.command) + " -> " + commandText(b.fence.command));
  }
}

void diffNodes(const Config& a, const Config& b, std::string_view self, Collector& c) {
  if (a.findNode(self) && !b.findNode(self)) {
    c.refuse("node.name", quote(self), "(none)",
             "the new file has no [[node]] for this director, which runs as \"" +
                 std::string(self) + "\"");
  }
  for (const Node& n : b.nodes) {
    const Node* old = a.findNode(n.name);
    if (!old) {
      c.change("nodes", "added " + n.name + " priority " + std::to_string(n.priority));
      continue;
    }
    if (old->priority != n.priority) {
      c.change("nodes", n.name + " priority " + std::to_string(old->priority) + " -> " +
                            std::to_string(n.priority));
    }
    if (old->address != n.address) {
      c.change("nodes", n.name + " address " + (old->address ? old->address->toString() : "-") +
                            " -> " + (n.address ? n.address->toString() : "-"));
    }
    if (old->interfaces != n.interfaces) c.change("nodes", n.name + " interfaces changed");
    c.compare("nodes", n.name + " route_metric", old->route_metric, n.route_metric,
              [](const std::optional<uint32_t>& m) { return m ? std::to_string(*m) : "-"; });
  }
  for (const Node& n : a.nodes) {
    if (!b.findNode(n.name)) c.change("nodes", "removed " + n.name);
  }
}

// VIPs are matched by address (without the prefix length) and interface: the same address with
// another prefix is a change of that VIP, not a removal and an addition.
void diffVips(const std::vector<Vip>& a, const std::vector<Vip>& b, Collector& c) {
  auto same = [](const Vip& x, const Vip& y) {
    return x.address.address == y.address.address && x.interface == y.interface;
  };
  for (const Vip& v : b) {
    auto old = std::find_if(a.begin(), a.end(), [&](const Vip& o) { return same(o, v); });
    if (old == a.end()) {
      c.change("vips", "added " + vipName(v));
    } else if (!(*old == v)) {
      c.change("vips", "changed " + vipName(*old) + " -> " + vipName(v));
    }
  }
  for (const Vip& v : a) {
    if (std::none_of(b.begin(), b.end(), [&](const Vip& n) { return same(n, v); })) {
      c.change("vips", "removed " + vipName(v));
    }
  }
}

// What a changed service's check does differently: the timers by value, the rest by name.
void diffCheck(const std::string& where, const Check& a, const Check& b, Collector& c) {
  if (a == b) return;
  const std::string p = where + " check ";
  constexpr std::string_view s = "virtual_servers";
  c.compare(s, p + "type", a.type, b.type, checkTypeName);
  c.compare(s, p + "interval", a.interval, b.interval, showDuration);
  c.compare(s, p + "timeout", a.timeout, b.timeout, showDuration);
  c.compare(s, p + "rise", a.rise, b.rise, showInt);
  c.compare(s, p + "fall", a.fall, b.fall, showInt);
  Check rest = a;
  rest.type = b.type;
  rest.interval = b.interval;
  rest.timeout = b.timeout;
  rest.rise = b.rise;
  rest.fall = b.fall;
  if (!(rest == b)) c.change(s, p + "probe settings changed (port, request or expectation)");
}

void diffRealServers(const VirtualServer& a, const VirtualServer& b, Collector& c) {
  constexpr std::string_view s = "virtual_servers";
  auto find = [](const std::vector<RealServer>& v, const Endpoint& e) {
    return std::find_if(v.begin(), v.end(), [&](const RealServer& r) { return r.address == e; });
  };
  for (const RealServer& r : b.real_servers) {
    const std::string where = b.name + ": real server " + r.address.toString();
    auto old = find(a.real_servers, r.address);
    if (old == a.real_servers.end()) {
      c.change(s, where + " added, weight " + std::to_string(r.weight));
      continue;
    }
    c.compare(s, where + " weight", old->weight, r.weight, showInt);
    RealServer rest = *old;
    rest.weight = r.weight;
    rest.check = r.check;
    if (!(rest == r)) c.change(s, where + " forwarding, thresholds or tunnel changed");
    // A service-wide check change is said once, for the service.
    if (a.check == b.check && !(old->check == r.check)) {
      c.change(s, where + " check overrides changed");
    }
  }
  for (const RealServer& r : a.real_servers) {
    if (find(b.real_servers, r.address) == b.real_servers.end()) {
      c.change(s, a.name + ": real server " + r.address.toString() + " removed");
    }
  }
}

void diffVirtualServers(const std::vector<VirtualServer>& a, const std::vector<VirtualServer>& b,
                        Collector& c) {
  constexpr std::string_view s = "virtual_servers";
  auto find = [](const std::vector<VirtualServer>& v, const std::string& name) {
    return std::find_if(v.begin(), v.end(),
                        [&](const VirtualServer& vs) { return vs.name == name; });
  };
  auto endpoint = [](const std::optional<Endpoint>& e) { return e ? e->toString() : "none"; };
  for (const VirtualServer& vs : b) {
    auto old = find(a, vs.name);
    if (old == a.end()) {
      c.change(
          s, "added " + vs.name + " (" + std::to_string(vs.real_servers.size()) + " real servers)");
      continue;
    }
    if (*old == vs) continue;
    c.compare(s, vs.name + ": address", old->address, vs.address, endpoint);
    c.compare(s, vs.name + ": scheduler", old->scheduler, vs.scheduler,
              [](const std::string& v) { return quote(v); });
    c.compare(s, vs.name + ": persistence_timeout", old->persistence_timeout,
              vs.persistence_timeout, showDuration);
    c.compare(s, vs.name + ": fallback", old->fallback, vs.fallback, endpoint);
    c.compare(s, vs.name + ": slow_start", old->slow_start, vs.slow_start, showDuration);
    c.compare(s, vs.name + ": route", old->route, vs.route,
              [](const std::optional<ServiceRoute>& r) {
                return r ? "min_healthy " + std::to_string(r->min_healthy) : std::string("none");
              });
    diffCheck(vs.name + ":", old->check, vs.check, c);
    diffRealServers(*old, vs, c);
    VirtualServer rest = *old;
    rest.address = vs.address;
    rest.scheduler = vs.scheduler;
    rest.persistence_timeout = vs.persistence_timeout;
    rest.fallback = vs.fallback;
    rest.slow_start = vs.slow_start;
    rest.check = vs.check;
    rest.real_servers = vs.real_servers;
    rest.route = vs.route;
    if (!(rest == vs)) {
      c.change(s, vs.name +
                      ": service settings changed (fwmark, protocol, forwarding, flags, "
                      "on_failure or notify)");
    }
  }
  for (const VirtualServer& vs : a) {
    if (find(b, vs.name) == b.end()) c.change(s, "removed " + vs.name);
  }
}

}  // namespace

std::string Refusal::format() const {
  return key + " cannot change while tandemd runs: running " + running + ", new " + next + " (" +
         why + "); put the running value back, or restart tandemd to change it";
}

std::string SectionChange::format() const {
  std::string out = section + ": ";
  for (size_t i = 0; i < details.size(); ++i) out += (i ? "; " : "") + details[i];
  return out;
}

bool ReloadDiff::changed(std::string_view section) const {
  return std::any_of(changes.begin(), changes.end(),
                     [&](const SectionChange& c) { return c.section == section; });
}

std::string ReloadDiff::changedSections() const {
  if (changes.empty()) return "nothing";
  std::string out;
  for (size_t i = 0; i < changes.size(); ++i) out += (i ? "," : "") + changes[i].section;
  return out;
}

ReloadDiff diffReload(const Config& running, const Config& next, std::string_view self) {
  Collector c;
  diffCluster(running.cluster, next.cluster, c);
  diffNodes(running, next, self, c);
  diffVips(running.vips, next.vips, c);
  diffVirtualServers(running.virtual_servers, next.virtual_servers, c);
  if (!(running.sync == next.sync)) {
    c.change("sync", std::string("enabled ") + (running.sync.enabled ? "yes" : "no") + " -> " +
                         (next.sync.enabled ? "yes" : "no") + ", interface " +
                         quote(next.sync.interface) + ", sync_id " +
                         std::to_string(next.sync.sync_id));
  }
  const Ipvs& ia = running.ipvs;
  const Ipvs& ib = next.ipvs;
  c.compare("ipvs", "manage", ia.manage, ib.manage,
            [](IpvsManage m) { return std::string(m == IpvsManage::kAll ? "all" : "owned"); });
  c.compare("ipvs", "monitor_interval", ia.monitor_interval, ib.monitor_interval, showDuration);
  c.compare("ipvs", "tcp_timeout", ia.tcp_timeout, ib.tcp_timeout, showDuration);
  c.compare("ipvs", "tcpfin_timeout", ia.tcpfin_timeout, ib.tcpfin_timeout, showDuration);
  c.compare("ipvs", "udp_timeout", ia.udp_timeout, ib.udp_timeout, showDuration);
  c.compare("ipvs", "set_sysctls", ia.set_sysctls, ib.set_sysctls,
            [](bool v) { return std::string(v ? "true" : "false"); });
  if (running.control.ipc_name != next.control.ipc_name) {
    c.refuse("control.ipc_name", quote(running.control.ipc_name), quote(next.control.ipc_name),
             "`tandem` finds the daemon by this name, which is published once, at start");
  }
  c.compare("control", "group", running.control.group, next.control.group,
            [](const std::string& v) { return quote(v); });
  c.compare("metrics", "enabled", running.metrics.enabled, next.metrics.enabled,
            [](bool v) { return std::string(v ? "true" : "false"); });
  c.compare("metrics", "listen", running.metrics.listen, next.metrics.listen,
            [](const Endpoint& e) { return quote(e.toString()); });
  if (running.daemon.state_dir != next.daemon.state_dir) {
    c.refuse("daemon.state_dir", quote(running.daemon.state_dir), quote(next.daemon.state_dir),
             "the role and the owned IPVS services are kept there; moving it would lose them");
  }
  c.compare("daemon", "log_level", running.daemon.log_level, next.daemon.log_level,
            [](const std::string& v) { return quote(v); });
  const Notify& na = running.notify;
  const Notify& nb = next.notify;
  c.compare("notify", "role", na.role, nb.role, commandText);
  c.compare("notify", "active", na.active, nb.active, commandText);
  c.compare("notify", "backup", na.backup, nb.backup, commandText);
  c.compare("notify", "fault", na.fault, nb.fault, commandText);
  c.compare("notify", "vip", na.vip, nb.vip, commandText);
  c.compare("notify", "timeout", na.timeout, nb.timeout, showDuration);
  const Routes& ra = running.routes;
  const Routes& rb = next.routes;
  c.compare("routes", "mode", ra.mode, rb.mode, [](RouteMode m) {
    return quote(m == RouteMode::kActiveActive ? "active-active" : "active-backup");
  });
  c.compare("routes", "table", ra.table, rb.table, showInt);
  c.compare("routes", "protocol", ra.protocol, rb.protocol, showInt);
  c.compare("routes", "interface", ra.interface, rb.interface,
            [](const std::string& v) { return quote(v); });
  c.compare("routes", "own_interface", ra.own_interface, rb.own_interface,
            [](bool v) { return std::string(v ? "true" : "false"); });
  c.compare("routes", "metric", ra.metric, rb.metric, showInt);
  c.compare("routes", "hold_down", ra.hold_down, rb.hold_down, showDuration);
  return c.finish();
}

}  // namespace tandem::config
