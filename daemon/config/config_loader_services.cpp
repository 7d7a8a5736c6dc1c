// The config loader: virtual servers, real servers, their checks and routes
// (config_loader_parts.h).
#include <regex.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <vector>

#include "common/text.h"
#include "config/config_loader_parts.h"
#include "config/config_validate.h"

namespace tandem::config::loading {

using namespace std::chrono_literals;

VirtualServer Loader::readVirtualServer(TableReader& r) {
  VirtualServer vs;
  VsPos pos;
  pos.table = r.where();
  bool has_addr = r.has("address");
  bool has_mark = r.has("fwmark");
  if (auto s = r.string("address")) {
    auto e = Endpoint::parse(*s, false);
    if (!e) {
      r.badValue("address", "\"" + *s + "\": " + endpointProblem(*s, false),
                 "write e.g. \"198.51.100.10:80\" or \"[2001:db8::10]:443\"");
    }
    vs.address = e;
    pos.address = r.where("address");
  }
  if (auto m = r.integer("fwmark", 1, 0xffffffffLL)) {
    vs.fwmark = static_cast<uint32_t>(*m);
    pos.address = r.where("fwmark");
  }
  if (has_addr && has_mark) {
    r.badValue("fwmark", "a virtual server has both address and fwmark",
               "use address = \"ip:port\" or fwmark = N, not both");
  } else if (!has_addr && !has_mark) {
    error(r.where(),
          "[[virtual_server]] has neither address nor fwmark; add "
          "address = \"ip:port\" or fwmark = N");
  }
  if (auto f = r.choice<Family>("family", {{"ipv4", Family::kInet}, {"ipv6", Family::kInet6}})) {
    vs.fwmark_family = *f;
    if (!has_mark) {
      r.badValue("family", "family applies only to fwmark services",
                 "remove it; an address service takes its family from the address");
    }
  }
  if (auto p = r.choice<Protocol>(
          "protocol",
          {{"tcp", Protocol::kTcp}, {"udp", Protocol::kUdp}, {"sctp", Protocol::kSctp}})) {
    vs.protocol = *p;
    if (has_mark) {
      r.badValue("protocol", "a fwmark service matches every protocol the mark covers",
                 "remove protocol from this fwmark service");
    }
  }
  vs.name = r.string("name").value_or("");
  if (vs.name.empty()) {
    vs.name = vs.address ? vs.address->toString()
                         : (vs.fwmark ? "fwmark:" + std::to_string(*vs.fwmark) : "?");
  }
  bool scheduler_ok = !r.has("scheduler");  // the default is fine; a given one must read
  if (auto s = r.string("scheduler")) {
    if (std::find(kSchedulers.begin(), kSchedulers.end(), *s) == kSchedulers.end()) {
      auto m = closestMatch(*s, kSchedulers);
      r.badValue("scheduler", "\"" + *s + "\" is not an IPVS scheduler",
                 (m ? "did you mean \"" + *m + "\"? " : std::string()) + "use one of " +
                     quotedAlternatives(kSchedulers));
    } else {
      vs.scheduler = *s;
      scheduler_ok = true;
    }
  }
  if (auto flags = r.strings("scheduler_flags")) {
    if (scheduler_ok && vs.scheduler != "sh" && vs.scheduler != "mh") {
      r.badValue("scheduler_flags", "only the sh and mh schedulers take flags",
                 "remove scheduler_flags, or use scheduler = \"sh\" or \"mh\"");
    }
    for (const auto& f : *flags) {
      if (f != "fallback" && f != "port") {
        r.badValue("scheduler_flags", "\"" + f + "\" is not a scheduler flag",
                   "use \"fallback\" and/or \"port\"");
      }
    }
    vs.scheduler_flags = *flags;
  }
  if (auto f = readForwarding(r, "forwarding")) vs.forwarding = *f;
  if (auto d = r.duration("persistence_timeout", 0ms, 24h * 24)) {
    vs.persistence_timeout = *d;
    if (d->count() % 1000 != 0) {
      r.badValue("persistence_timeout",
                 "IPVS keeps the persistence timeout in whole seconds, so " + formatDuration(*d) +
                     " would be cut to " +
                     formatDuration(std::chrono::duration_cast<std::chrono::seconds>(*d)),
                 "write a whole number of seconds, e.g. \"600s\" or \"10m\"");
    }
  }
  if (const toml::node* n = r.raw("persistence_netmask")) {
    vs.persistence_netmask = readNetmask(r, *n, vs.family());
    if (vs.persistence_timeout == 0ms) {
      r.warnValue("persistence_netmask", "it has no effect without persistence_timeout",
                  "set persistence_timeout, or remove persistence_netmask");
    }
  }
  if (auto b = r.boolean("one_packet")) {
    vs.one_packet = *b;
    // A fwmark service may carry UDP; the kernel applies one-packet scheduling to its UDP.
    if (*b && vs.address && vs.protocol != Protocol::kUdp) {
      r.badValue("one_packet", "one-packet scheduling is for UDP services",
                 "remove it, or use protocol = \"udp\"");
    }
  }
  if (auto f = r.choice<OnFailure>(
          "on_failure", {{"quiescent", OnFailure::kQuiescent}, {"remove", OnFailure::kRemove}})) {
    vs.on_failure = *f;
  }
  if (auto s = r.string("fallback")) {
    if (auto e = Endpoint::parse(*s, true)) {
      if (e->port == 0 && vs.address) e->port = vs.address->port;  // like a real server
      vs.fallback = e;
      pos.fallback = r.where("fallback");
    } else {
      r.badValue("fallback", "\"" + *s + "\": " + endpointProblem(*s, true),
                 "write the sorry server as e.g. \"127.0.0.1:80\"");
    }
  }
  if (auto d = r.duration("slow_start", 0ms, 1h)) vs.slow_start = *d;
  vs.notify = readCommand(r, "notify");
  if (auto d = r.duration("notify_timeout", 100ms, 10min)) vs.notify_timeout = *d;
  if (const toml::table* t = r.table("check")) {
    TableReader cr(*t, "virtual_server.check", ctx_);
    vs.check = readCheck(cr, Check{});
  }
  if (const toml::table* t = r.table("route")) {
    TableReader rr(*t, "virtual_server.route", ctx_);
    vs.route = readServiceRoute(rr, vs);
    pos.route = rr.where();
  }
  for (const toml::table* t : r.tables("real_server")) {
    TableReader rr(*t, "virtual_server.real_server", ctx_, true);
    int before = ctx_.diags.errorCount();
    vs.real_servers.push_back(readRealServer(rr, vs));
    pos.reals.push_back(
        {rr.where("address"), rr.where("forwarding"), ctx_.diags.errorCount() == before});
  }
  pos.ok = vs.address.has_value() != vs.fwmark.has_value();
  r.finish();
  pos_.virtual_servers.push_back(pos);
  return vs;
}

std::optional<Forwarding> Loader::readForwarding(TableReader& r, std::string_view key) {
  return r.choice<Forwarding>(
      key, {{"nat", Forwarding::kNat}, {"dr", Forwarding::kDr}, {"tun", Forwarding::kTun}});
}

std::optional<IpAddress> Loader::readNetmask(TableReader& r, const toml::node& n, Family family) {
  if (family == Family::kInet6) {
    if (!n.is_integer() || *n.value<int64_t>() < 1 || *n.value<int64_t>() > 128) {
      r.badValue("persistence_netmask", "an IPv6 service takes a prefix length",
                 "write an integer from 1 to 128, e.g. persistence_netmask = 64");
      return std::nullopt;
    }
    int len = static_cast<int>(*n.value<int64_t>());
    IpAddress mask;
    mask.family = Family::kInet6;
    for (int i = 0; i < len; ++i) {
      mask.bytes[static_cast<size_t>(i / 8)] |= static_cast<uint8_t>(0x80 >> (i % 8));
    }
    return mask;
  }
  if (!n.is_string()) {
    r.badValue("persistence_netmask", "it is " + std::string(tomlTypeName(n)),
               "an IPv4 service takes a netmask string, e.g. \"255.255.255.0\"");
    return std::nullopt;
  }
  std::string s = *n.value<std::string>();
  auto m = IpAddress::parse(s);
  if (!m || m->family != Family::kInet || !netmaskLength(*m)) {
    r.badValue("persistence_netmask", "\"" + s + "\" is not a netmask",
               "a netmask is contiguous ones then zeros, e.g. \"255.255.255.0\"");
    return std::nullopt;
  }
  return m;
}

RealServer Loader::readRealServer(TableReader& r, const VirtualServer& vs) {
  RealServer rs;
  rs.forwarding = vs.forwarding;
  if (auto s = r.string("address", true)) {
    if (auto e = Endpoint::parse(*s, true)) {
      rs.address = *e;
      if (rs.address.port == 0 && vs.address) rs.address.port = vs.address->port;
    } else {
      r.badValue("address", "\"" + *s + "\": " + endpointProblem(*s, true),
                 "write e.g. \"198.51.100.21:80\", or the address alone to use the "
                 "service's port");
    }
  }
  if (auto w = r.integer("weight", 0, 65535)) rs.weight = static_cast<int>(*w);
  // The kernel takes thresholds up to INT_MAX (EINVAL above) and refuses lower > upper
  // (ERANGE) even when upper is 0, "unlimited": both measured in the VM lab.
  if (auto v = r.integer("upper_threshold", 0, 0x7fffffffLL)) {
    rs.upper_threshold = static_cast<uint32_t>(*v);
  }
  if (auto v = r.integer("lower_threshold", 0, 0x7fffffffLL)) {
    rs.lower_threshold = static_cast<uint32_t>(*v);
  }
  if (rs.lower_threshold > rs.upper_threshold) {
    r.badValue("lower_threshold",
               rs.upper_threshold == 0 ? "it is set without an upper_threshold"
                                       : "it is above upper_threshold",
               "the kernel needs upper_threshold set and at least lower_threshold (" +
                   std::to_string(rs.lower_threshold) + ")");
  }
  if (auto f = readForwarding(r, "forwarding")) rs.forwarding = *f;
  bool tun = rs.forwarding == Forwarding::kTun;
  if (auto t = r.choice<TunnelType>(
          "tunnel_type",
          {{"ipip", TunnelType::kIpip}, {"gue", TunnelType::kGue}, {"gre", TunnelType::kGre}})) {
    rs.tunnel_type = *t;
  }
  auto tunnel_port = r.integer("tunnel_port", 1, 65535);
  if (tunnel_port) rs.tunnel_port = static_cast<uint16_t>(*tunnel_port);
  if (auto b = r.boolean("tunnel_checksum")) rs.tunnel_checksum = *b;
  for (const char* k : {"tunnel_type", "tunnel_port", "tunnel_checksum"}) {
    if (r.has(k) && !tun) {
      r.badValue(k, "tunnel options need tun forwarding",
                 "remove " + std::string(k) + ", or set forwarding = \"tun\"");
    }
  }
  if (tun && rs.tunnel_type == TunnelType::kGue && rs.tunnel_port == 0 && !r.has("tunnel_port")) {
    r.badValue(r.has("tunnel_type") ? "tunnel_type" : "forwarding", "a GUE tunnel needs a UDP port",
               "add tunnel_port = N");
  }
  if (const toml::table* t = r.table("check")) {
    TableReader cr(*t, "virtual_server.real_server.check", ctx_);
    rs.check = readCheck(cr, vs.check);
  } else {
    rs.check = vs.check;
  }
  r.finish();
  return rs;
}

// An HTTP or HTTPS check's request and what its answer must hold.
void Loader::readHttpOptions(TableReader& r, Check& c) {
  if (auto m = r.choice<HttpMethod>("method",
                                    {{"GET", HttpMethod::kGet}, {"HEAD", HttpMethod::kHead}})) {
    c.method = *m;
  }
  if (auto s = r.string("path")) {
    if (s->empty() || s->front() != '/') {
      r.badValue("path", "\"" + *s + "\" is not an absolute path",
                 "the HTTP path starts with /, e.g. \"/index.html\"");
    } else if (auto why = httpTextProblem(*s, "a path")) {
      r.badValue("path", *why, "percent-encode it, e.g. %20 for a space");
    }
    c.path = *s;
  }
  if (auto s = r.string("host")) {
    if (auto why = hostHeaderProblem(*s)) {
      r.badValue("host", *why, "write a host name or address, e.g. \"www.example.com\"");
    }
    c.host = *s;
  }
  if (auto list = r.strings("expect_status")) {
    c.expect_status.clear();
    for (const auto& s : *list) {
      if (auto range = parseStatusRange(s)) {
        c.expect_status.push_back(*range);
      } else {
        r.badValue("expect_status", "\"" + s + "\" is not a status code or range",
                   "write codes from 100 to 599 as \"200\" or \"200-399\"");
      }
    }
    if (list->empty()) {
      r.badValue("expect_status", "the list is empty",
                 "name at least one healthy status, e.g. [\"200-399\"]");
    }
  }
  if (auto s = r.string("expect_body")) c.expect_body = *s;
  if (auto s = r.string("expect_body_regex")) {
    if (auto bad = regexError(*s)) {
      r.badValue("expect_body_regex", "\"" + *s + "\" is not a regular expression: " + *bad,
                 "write a POSIX extended regular expression, e.g. \"status: (ok|ready)\"");
    } else {
      c.expect_body_regex = *s;
    }
  }
  if (auto n = r.integer("max_response", 256, 16777216)) {
    c.max_response = static_cast<uint32_t>(*n);
  }
}

Check Loader::readCheck(TableReader& r, const Check& base) {
  Check c = base;
  if (auto t = r.choice<CheckType>("type", {{"none", CheckType::kNone},
                                            {"tcp", CheckType::kTcp},
                                            {"http", CheckType::kHttp},
                                            {"https", CheckType::kHttps},
                                            {"udp", CheckType::kUdp},
                                            {"dns", CheckType::kDns},
                                            {"smtp", CheckType::kSmtp},
                                            {"exec", CheckType::kExec}})) {
    c.type = *t;
  }
  if (auto d = r.duration("interval", 100ms, 1h)) c.interval = *d;
  if (auto d = r.duration("timeout", 10ms, 10min)) c.timeout = *d;
  if (auto n = r.integer("rise", 1, 100)) c.rise = static_cast<int>(*n);
  if (auto n = r.integer("fall", 1, 100)) c.fall = static_cast<int>(*n);
  if (auto i = r.choice<InitialHealth>("initial", {{"up", InitialHealth::kUp},
                                                   {"down", InitialHealth::kDown},
                                                   {"rise", InitialHealth::kDownUntilRise}})) {
    c.initial = *i;
  }
  if (auto n = r.integer("port", 1, 65535)) c.port = static_cast<uint16_t>(*n);

  auto owns = [&](const std::string& key) {
    const auto& types = checkOptionOwners().at(key);
    return std::find(types.begin(), types.end(), c.type) != types.end();
  };
  // Type options are read only where they apply; elsewhere finish() explains why not.
  if (owns("method")) readHttpOptions(r, c);
  if (owns("tls_verify")) {
    if (auto b = r.boolean("tls_verify")) c.tls_verify = *b;
    if (auto s = r.string("ca_file")) {
      // tandemd runs in / (daemonize, systemd): a relative path would name another file for
      // it than for `tandem config verify` run elsewhere.
      if (!s->empty() && s->front() != '/') {
        r.badValue("ca_file", "\"" + *s + "\" is not an absolute path",
                   "name the PEM file from /, e.g. \"/etc/tandem/real-servers-ca.pem\"");
      }
      c.ca_file = *s;
    }
  }
  if (owns("payload")) {
    if (auto s = r.string("payload")) c.payload = *s;
    if (auto s = r.string("expect_reply")) c.expect_reply = *s;
    if (auto b = r.boolean("accept_silence")) c.accept_silence = *b;
  }
  if (owns("query_name")) {
    if (auto s = r.string("query_name")) {
      if (auto why = dnsNameProblem(*s)) {
        r.badValue("query_name", *why, "write a domain name, e.g. \"www.example.com\"");
      }
      c.query_name = *s;
    }
    if (auto s = r.string("query_type")) {
      if (std::find(kDnsTypes.begin(), kDnsTypes.end(), *s) == kDnsTypes.end()) {
        r.badValue("query_type", "\"" + *s + "\" is not a supported record type",
                   "use one of " + quotedAlternatives(kDnsTypes));
      } else {
        c.query_type = *s;
      }
    }
    if (auto s = r.string("expect_rcode")) {
      if (std::find(kDnsRcodes.begin(), kDnsRcodes.end(), *s) == kDnsRcodes.end()) {
        r.badValue("expect_rcode", "\"" + *s + "\" is not a DNS rcode",
                   "use one of " + quotedAlternatives(kDnsRcodes));
      } else {
        c.expect_rcode = *s;
      }
    }
    if (auto s = r.string("expect_answer")) c.expect_answer = *s;
  }
  if (owns("source_address")) {
    if (auto s = r.string("source_address")) {
      if (auto a = IpAddress::parse(*s)) {
        c.source_address = a;
      } else {
        r.badValue("source_address", "\"" + *s + "\" is not an IP address",
                   "name an address of this director, e.g. \"198.51.100.10\"");
      }
    }
  }
  if (owns("tcp_reset")) {
    if (auto b = r.boolean("tcp_reset")) c.tcp_reset = *b;
  }
  if (owns("helo")) {
    if (auto s = r.string("helo")) c.helo = *s;
  }
  if (owns("command")) {
    if (auto cmd = readCommand(r, "command")) c.command = cmd;
    if (auto b = r.boolean("exit_weight")) c.exit_weight = *b;
  }

  if (c.type == CheckType::kDns && c.query_name.empty()) {
    error(r.where(), "[" + r.path() +
                         "] is a dns check without query_name; add "
                         "query_name = \"www.example.com\"");
  }
  if (c.type == CheckType::kExec && !c.command && !r.has("command")) {
    error(r.where(), "[" + r.path() +
                         "] is an exec check without command; add "
                         "command = [\"/path/to/check\", \"arg\"]");
  }
  if (c.type == CheckType::kUdp && c.payload.empty()) {
    error(r.where(), "[" + r.path() +
                         "] is a udp check without payload; add payload = "
                         "\"...\" (a UDP service answers only when asked something)");
  }
  CheckType type = c.type;
  r.finish([type, &r](const std::string& key) -> std::string {
    auto it = checkOptionOwners().find(key);
    if (it == checkOptionOwners().end()) return {};
    std::vector<std::string> names;
    for (CheckType t : it->second) names.push_back("\"" + checkTypeName(t) + "\"");
    return r.path() + "." + key + " is an option of " + TableReader::alternatives(names) +
           " checks; this check is type = \"" + checkTypeName(type) +
           "\", so remove it or change the type";
  });
  return c;
}

std::optional<StatusRange> Loader::parseStatusRange(const std::string& s) {
  auto num = [](std::string_view t) -> std::optional<int> {
    if (t.size() != 3) return std::nullopt;
    int v = 0;
    for (char ch : t) {
      if (ch < '0' || ch > '9') return std::nullopt;
      v = v * 10 + (ch - '0');
    }
    if (v < 100 || v > 599) return std::nullopt;
    return v;
  };
  size_t dash = s.find('-');
  if (dash == std::string::npos) {
    auto v = num(s);
    if (!v) return std::nullopt;
    return StatusRange{*v, *v};
  }
  auto lo = num(std::string_view(s).substr(0, dash));
  auto hi = num(std::string_view(s).substr(dash + 1));
  if (!lo || !hi || *lo > *hi) return std::nullopt;
  return StatusRange{*lo, *hi};
}

ServiceRoute Loader::readServiceRoute(TableReader& r, const VirtualServer& vs) {
  ServiceRoute route;
  if (auto v = r.integer("min_healthy", 1, 100000)) route.min_healthy = static_cast<int>(*v);
  if (vs.fwmark) {
    error(r.where(), "[virtual_server.route] on the firewall-mark service " + vs.name +
                         ": a mark has no address to route; route its addresses' services "
                         "instead, or drop the route table");
  }
  r.finish();
  return route;
}

void Loader::readRoutes(TableReader& r, Routes& routes) {
  if (auto m = r.choice<RouteMode>("mode", {{"active-backup", RouteMode::kActiveBackup},
                                            {"active-active", RouteMode::kActiveActive}})) {
    routes.mode = *m;
  }
  if (auto v = r.integer("table", 1, UINT32_MAX)) {
    if (*v == 253 || *v == 255) {
      r.badValue(
          "table",
          std::to_string(*v) + " is the kernel's " + (*v == 255 ? "local" : "default") + " table",
          "use 254 (main) or a table of tandem's own, e.g. 100");
    } else {
      routes.table = static_cast<uint32_t>(*v);
    }
  }
  if (auto v = r.integer("protocol", 5, 255)) {
    if (const char* owner = routeProtocolOwner(static_cast<int>(*v))) {
      r.badValue("protocol",
                 std::to_string(*v) + " is " + owner +
                     "'s: tandem would sweep that daemon's routes as orphans, and it tandem's",
                 "use the default, 201, or another number no program on the director uses");
    } else {
      routes.protocol = static_cast<int>(*v);
    }
  }
  if (auto v = r.string("interface")) {
    if (auto why = interfaceNameProblem(*v)) {
      r.badValue("interface", *why, "name the interface as `ip link` shows it, e.g. \"tandem0\"");
    } else {
      routes.interface = *v;
    }
  }
  if (auto b = r.boolean("own_interface")) routes.own_interface = *b;
  if (auto v = r.integer("metric", 0, UINT32_MAX)) routes.metric = static_cast<uint32_t>(*v);
  if (auto d = r.duration("hold_down", 0ms, 1h)) routes.hold_down = *d;
  r.finish();
}

}  // namespace tandem::config::loading
