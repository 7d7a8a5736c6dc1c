// One virtual block of an ldirectord.cf into a [[virtual_server]], its check and its real
// servers: importVirtual runs one family of directives after the other (identity, scheduling,
// failover, the check, request and receive, what tandem has no use for, the real servers), each
// recording its lines in the report in that order.
#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "common/text.h"
#include "ldirectord_importer.h"

namespace tandem::importer::ldirectord_import {

namespace {

constexpr auto kSchedulers =
    std::to_array<std::string_view>({"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed",
                                     "nq", "mh", "fo", "ovf", "twos"});

// ldirectord's service for a port when none is given (its table, by port number).
std::string_view serviceForPort(uint16_t port) {
  static constexpr std::array<std::pair<uint16_t, std::string_view>, 19> kByPort = {{
      {21, "ftp"},          {25, "smtp"},    {53, "dns"},   {80, "http"},     {110, "pop"},
      {119, "nntp"},        {143, "imap"},   {389, "ldap"}, {443, "https"},   {587, "submission"},
      {636, "ldaps"},       {993, "imaps"},  {995, "pops"}, {1521, "oracle"}, {1812, "radius"},
      {3128, "http_proxy"}, {3306, "mysql"}, {5060, "sip"}, {5432, "pgsql"},
  }};
  for (const auto& [p, s] : kByPort) {
    if (p == port) return s;
  }
  return "none";
}

// A word for /bin/sh, in single quotes.
std::string shellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// The mapping's keyword for a directive of a virtual block.
std::string virtualKeyword(const ld::Directive& d, bool fwmark) {
  if (d.key == "quiescent") return d.value == "yes" ? "quiescent = yes" : "quiescent = no";
  if (d.key == "service") return "service = " + d.value;
  if (d.key == "protocol" && fwmark) return "protocol = fwm";
  if (d.key == "checktype") {
    bool numeric =
        std::all_of(d.value.begin(), d.value.end(), [](char c) { return c >= '0' && c <= '9'; });
    return numeric ? "checktype = N" : "checktype = " + d.value;
  }
  return d.key;
}

bool looksLikeRegex(std::string_view s) {
  return s.find_first_of("\\^$.|?*+()[]{}") != std::string_view::npos;
}

// The reverse-lookup name of an address, for a dns check of a PTR record.
std::string reverseName(const IpAddress& a) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  if (a.family == Family::kInet) {
    for (int i = 3; i >= 0; --i) out += std::to_string(a.bytes[static_cast<size_t>(i)]) + ".";
    return out + "in-addr.arpa";
  }
  for (int i = 15; i >= 0; --i) {
    uint8_t b = a.bytes[static_cast<size_t>(i)];
    out += kHex[b & 0xf];
    out += '.';
    out += kHex[b >> 4];
    out += '.';
  }
  return out + "ip6.arpa";
}

// ldirectord adds the leading / of an http request.
std::string httpPath(std::string request) {
  if (request.empty() || request.front() != '/') request = "/" + request;
  return request;
}

// A dns check's request: a name, or an address whose PTR record ldirectord looks up.
void setDnsRequest(ConfTable& check, const std::string& request) {
  std::string name = request.starts_with("/") ? request.substr(1) : request;
  if (auto a = IpAddress::parse(name)) {
    check.set("query_name", tomlString(reverseName(*a)), "ldirectord looks up its PTR");
    check.set("query_type", tomlString("PTR"));
  } else {
    check.set("query_name", tomlString(name));
  }
}

// An http receive string: ldirectord matches a Perl regular expression; plain text is a
// substring either way, anything else goes to the POSIX one. True for a regular expression.
bool setHttpReceive(ConfTable& check, const std::string& receive) {
  if (looksLikeRegex(receive)) {
    check.set("expect_body_regex", tomlString(receive), "a Perl regex in ldirectord: check it");
    return true;
  }
  check.set("expect_body", tomlString(receive));
  return false;
}

// The forwarding of an ldirectord method (gate, ipip, masq).
std::string forwardingOf(std::string_view method) {
  if (method == "gate") return "dr";
  if (method == "ipip") return "tun";
  return "nat";
}

}  // namespace

Importer::VirtualImport::VirtualImport(const ld::VirtualBlock& block)
    : v(block),
      fwmark(block.address.fwmark.has_value()),
      ipv6(block.address.ipv6),
      vport(fwmark ? 0 : block.address.address->port) {}

void Importer::use(VirtualImport& vi, const ld::Directive* d, std::string_view keyword,
                   const std::string& detail) {
  if (d == nullptr || vi.used.count(d)) return;
  vi.used.insert(d);
  rec(d->line, "virtual", keyword, detail);
}

void Importer::importVirtual(const ld::VirtualBlock& v) {
  VirtualImport vi(v);
  vi.vs.header = "[[virtual_server]]";
  vi.vs.comments.push_back(where(v.line) + ": " + v.keyword + "=" + v.value);
  vi.check.header = "[virtual_server.check]";
  const size_t errors_before = errors_.size();
  if (!importIdentity(vi)) return;
  importScheduling(vi);
  importFailover(vi);
  importCheck(vi);
  importRequestAndReceive(vi);
  recordUnused(vi);
  importRealServers(vi);
  if (errors_.size() != errors_before) return;

  services_.push_back(std::move(vi.vs));
  services_.push_back(std::move(vi.check));
  for (auto& t : vi.reals) services_.push_back(std::move(t));
}

bool Importer::importIdentity(VirtualImport& vi) {
  const ld::VirtualBlock& v = vi.v;
  const bool fwmark = vi.fwmark;
  const bool ipv6 = vi.ipv6;
  const uint16_t vport = vi.vport;
  ConfTable& vs = vi.vs;
  // Protocol: ldirectord's default is udp on port 53.
  std::string& protocol = vi.protocol;
  protocol = fwmark ? "fwm" : (vport == 53 ? "udp" : "tcp");
  if (const auto* d = own(v, "protocol")) {
    if (fwmark && d->value != "fwm") {
      error(d->line, "protocol must be fwm for a firewall-mark service (ldirectord's rule)");
    } else if (!fwmark && d->value != "tcp" && d->value != "udp") {
      error(d->line, "protocol \"" + d->value +
                         "\" is not tcp or udp (fwm is for a firewall-mark virtual=)");
    } else {
      protocol = d->value;
      use(vi, d, fwmark ? "protocol = fwm" : "protocol");
    }
  }
  vi.udp = protocol == "udp";

  // The name: servicename, else the address; unique.
  std::string name;
  if (const auto* d = own(v, "servicename")) {
    name = ld::unquote(d->value);
    use(vi, d, "servicename");
  }
  if (name.empty()) {
    name = fwmark ? "fwmark:" + std::to_string(*v.address.fwmark) : v.address.address->toString();
  }
  if (names_.count(name)) {
    std::string with_proto = name + "/" + protocol;
    name = with_proto;
    for (int i = 2; names_.count(name); ++i) name = with_proto + "-" + std::to_string(i);
  }
  names_.insert(name);
  vs.set("name", tomlString(name));

  // Identity, for duplicates (ldirectord refuses them too).
  std::string identity = fwmark ? "fwm " + std::to_string(*v.address.fwmark) + (ipv6 ? "/6" : "")
                                : protocol + " " + v.address.address->toString();
  if (auto it = seen_services_.find(identity); it != seen_services_.end()) {
    error(v.line, "duplicate virtual service: the same one is at line " +
                      std::to_string(it->second) + "; merge the two blocks");
    return false;
  }
  seen_services_[identity] = v.line;

  if (fwmark) {
    vs.set("fwmark", std::to_string(*v.address.fwmark));
    if (ipv6) vs.set("family", tomlString("ipv6"));
  } else {
    vs.set("address", tomlString(v.address.address->toString()));
    vs.set("protocol", tomlString(protocol));
    vips_.push_back(v.address.address->address);
  }
  if (const auto* d = own(v, "comment")) {
    vs.comments.push_back(ld::unquote(d->value));
    use(vi, d, "comment");
  }

  return true;
}

void Importer::importScheduling(VirtualImport& vi) {
  const ld::VirtualBlock& v = vi.v;
  const bool fwmark = vi.fwmark;
  const bool ipv6 = vi.ipv6;
  ConfTable& vs = vi.vs;
  const bool udp = vi.udp;
  // Scheduling and persistence.
  std::string scheduler = "wrr";
  std::string scheduler_comment = "ldirectord's default";
  if (const auto* d = own(v, "scheduler")) {
    if (!among(kSchedulers, d->value)) {
      error(d->line, "scheduler \"" + d->value + "\" is not an IPVS scheduler tandem knows; use " +
                         "rr, wrr, lc, wlc, lblc, lblcr, dh, sh, sed, nq, mh, fo, ovf or twos");
    }
    scheduler = d->value;
    scheduler_comment = "";
    use(vi, d, "scheduler");
  }
  vs.set("scheduler", tomlString(scheduler), scheduler_comment);
  if (const auto* d = own(v, "schedflags")) {
    std::vector<std::string> flags;
    std::string_view rest = d->value;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view f = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
      std::string flag;
      if (f == "sh-fallback" || f == "mh-fallback" || f == "flag-1") flag = "fallback";
      if (f == "sh-port" || f == "mh-port" || f == "flag-2") flag = "port";
      if (flag.empty()) {
        error(d->line, "scheduler flag \"" + std::string(f) +
                           "\" is not sh-fallback, sh-port, mh-fallback or mh-port");
        break;
      }
      if (std::find(flags.begin(), flags.end(), flag) == flags.end()) flags.push_back(flag);
    }
    if (scheduler != "sh" && scheduler != "mh") {
      error(d->line,
            "schedflags work with the sh and mh schedulers only: remove them, or use "
            "scheduler=sh");
    }
    vs.set("scheduler_flags", tomlStrings(flags));
    use(vi, d, "schedflags");
  }

  // Forwarding: the first real server's method, and an override for any other.
  std::string& service_forwarding = vi.service_forwarding;
  service_forwarding = v.reals.empty() ? "nat" : forwardingOf(v.reals[0].spec.method);
  vs.set("forwarding", tomlString(service_forwarding),
         v.reals.empty() ? "no real server: tandem's default" : "");

  if (const auto* d = own(v, "persistent")) {
    if (auto n =
            number(*d, 0, int64_t{576} * 3600, "tandem's persistence_timeout is 576h at most")) {
      if (*n > 0) vs.set("persistence_timeout", tomlString(std::to_string(*n) + "s"));
      use(vi, d, "persistent");
    }
  }
  if (const auto* d = own(v, "netmask")) {
    if (ipv6) {
      if (auto n = number(*d, 1, 128, "an IPv6 prefix length")) {
        vs.set("persistence_netmask", std::to_string(*n));
        use(vi, d, "netmask");
      }
    } else {
      auto mask = IpAddress::parse(d->value);
      if (!mask || mask->family != Family::kInet || !netmaskLength(*mask)) {
        error(d->line, "netmask \"" + d->value +
                           "\" is not a contiguous IPv4 netmask: write it like 255.255.255.0");
      } else {
        vs.set("persistence_netmask", tomlString(mask->toString()));
        use(vi, d, "netmask");
      }
    }
  }
  if (const auto* d = own(v, "ops")) {
    if (d->value == "yes" && !udp && !fwmark) {
      error(d->line, "ops = yes works with protocol = udp only (one-packet scheduling)");
    }
    if (d->value == "yes") vs.set("one_packet", "true");
    use(vi, d, "ops");
  }
}

void Importer::importFailover(VirtualImport& vi) {
  const ld::VirtualBlock& v = vi.v;
  const bool fwmark = vi.fwmark;
  const bool ipv6 = vi.ipv6;
  const uint16_t vport = vi.vport;
  ConfTable& vs = vi.vs;
  const std::string& protocol = vi.protocol;
  // What happens to a failed real server.
  Effective q = eff(vi, "quiescent");
  if (q.directive != nullptr) {
    bool yes = q.directive->value == "yes";
    vs.set("on_failure", tomlString(yes ? "quiescent" : "remove"),
           "quiescent = " + q.directive->value + (q.global ? " (global)" : ""));
    if (!q.global) use(vi, q.directive, yes ? "quiescent = yes" : "quiescent = no");
  } else {
    vs.set("on_failure", tomlString("remove"),
           "ldirectord's code removes a failed server when quiescent is unset");
    quiescent_defaulted_ = true;
  }

  // The fallback server.
  Effective fb = eff(vi, ipv6 ? "fallback6" : "fallback");
  if (const auto* other = own(v, ipv6 ? "fallback" : "fallback6")) {
    error(other->line, ipv6 ? "an IPv6 virtual service takes fallback6=[ADDRESS]:PORT"
                            : "an IPv4 virtual service takes fallback=ADDRESS:PORT");
  }
  if (fb.directive != nullptr) {
    auto spec = ld::parseFallback(fb.directive->value);
    if (!spec) {
      error(fb.directive->line, spec.error().message);
    } else if ((spec->address.family == Family::kInet6) != ipv6) {
      error(fb.directive->line, "the fallback is not of the virtual service's family (IPv" +
                                    std::string(ipv6 ? "6" : "4") + ")");
    } else {
      // ldirectord gives a virtual's own fallback the virtual's port when it has none.
      uint16_t port = spec->port.value_or(fb.global ? 0 : vport);
      vs.set("fallback", tomlString(Endpoint{spec->address, port}.toString()),
             fb.global ? "the global fallback" : "");
      std::string detail;
      if (!spec->method.empty() && forwardingOf(spec->method) != vi.service_forwarding) {
        detail = "its " + spec->method +
                 " is not kept: tandem forwards to the fallback as the "
                 "service does (" +
                 vi.service_forwarding + ")";
      }
      if (!fb.global) use(vi, fb.directive, fb.directive->key, detail);
    }
  }
  Effective fbc = eff(vi, "fallbackcommand");
  if (fbc.directive != nullptr) {
    std::string cmd = ld::unquote(fbc.directive->value);
    std::string args =
        (fwmark ? std::to_string(*v.address.fwmark) + ":0" : v.address.address->toString()) + " " +
        protocol;
    vs.set("notify",
           tomlString("case \"$TANDEM_EVENT\" in vs-down) " + cmd + " start " + args +
                      " ;; vs-up) " + cmd + " stop " + args + " ;; esac"),
           "ldirectord's fallbackcommand" + std::string(fbc.global ? " (global)" : ""));
    if (!fbc.global) use(vi, fbc.directive, "fallbackcommand");
  }
}

void Importer::importCheck(VirtualImport& vi) {
  const ld::VirtualBlock& v = vi.v;
  const bool fwmark = vi.fwmark;
  const uint16_t vport = vi.vport;
  // The check: its type follows checktype and, for negotiate checks, the service.
  ConfTable& check = vi.check;
  std::string checktype = "negotiate";
  const ld::Directive* checktype_d = own(v, "checktype");
  if (checktype_d != nullptr) {
    const std::string& c = checktype_d->value;
    bool numeric = !c.empty() &&
                   std::all_of(c.begin(), c.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (numeric) {
      checktype = "N";
    } else if (c == "connect" || c == "negotiate" || c == "ping" || c == "off" || c == "on" ||
               c == "external" || c == "external-perl") {
      checktype = c;
    }
  }
  const bool negotiate = checktype == "negotiate" || checktype == "N";
  std::string service = fwmark ? "none" : std::string(serviceForPort(vport));
  std::string service_comment =
      fwmark ? "" : "ldirectord's service for port " + std::to_string(vport) + ": " + service;
  const ld::Directive* service_d = own(v, "service");
  if (service_d != nullptr) {
    service = service_d->value;
    service_comment = "";
  }

  // Timeouts: a negotiate check takes negotiatetimeout first, the others checktimeout first;
  // each falls back to the other, the virtual's before the global, then to its own default.
  auto first_of = [&](std::initializer_list<const ld::Directive*> ds, int64_t dflt,
                      int* line) -> int64_t {
    for (const auto* d : ds) {
      if (d == nullptr) continue;
      if (auto n = number(*d, 1, 600, "tandem's timeout is 10m at most")) {
        *line = d->line;
        return *n;
      }
      return dflt;
    }
    *line = 0;
    return dflt;
  };
  const ld::Directive* v_ct = own(v, "checktimeout");
  const ld::Directive* v_nt = own(v, "negotiatetimeout");
  if (v_nt == nullptr) v_nt = own(v, "connecttimeout");
  const ld::Directive* g_ct = global("checktimeout");
  const ld::Directive* g_nt = global("negotiatetimeout");
  if (g_nt == nullptr) g_nt = global("connecttimeout");
  int timeout_line = 0;
  int64_t check_timeout = first_of({v_ct, v_nt, g_ct, g_nt}, 5, &timeout_line);
  int connect_line = timeout_line;
  int64_t negotiate_timeout = first_of({v_nt, v_ct, g_nt, g_ct}, 30, &timeout_line);
  int negotiate_line = timeout_line;

  Effective interval_d = eff(vi, "checkinterval");
  int64_t interval = 10;
  if (interval_d.directive != nullptr) {
    interval = number(*interval_d.directive, 1, 3600, "tandem checks at least hourly").value_or(10);
  }
  Effective fall_d = eff(vi, "failurecount");
  int64_t fall = 1;
  if (fall_d.directive != nullptr) {
    fall = number(*fall_d.directive, 1, 100, "tandem's fall").value_or(1);
  }

  // The kind of check tandem runs.
  const CheckKind kind = checkKind(vi, checktype, service, check_timeout, interval);
  const std::string& type = kind.type;
  std::string type_comment = kind.type_comment;
  const bool uses_negotiate_timeout = kind.uses_negotiate_timeout;
  const std::string& command = kind.command;
  vi.type = kind.type;
  vi.takes_request = kind.takes_request;
  vi.weights_zero = kind.weights_zero;
  if (!service_comment.empty() && negotiate && type_comment.empty()) {
    type_comment = service_comment;
  }
  check.set("type", tomlString(type), type_comment);
  const int64_t ld_timeout = uses_negotiate_timeout ? negotiate_timeout : check_timeout;
  const int timeout_from = uses_negotiate_timeout ? negotiate_line : connect_line;
  // tandem refuses a timeout longer than the interval (a hung server would be seen late);
  // ldirectord's defaults (negotiate 30s, every 10s) have one, so the timeout is cut to the
  // interval: the failure window shrinks, and a server slower than that to answer counts as
  // down, which it would not have under ldirectord.
  const int64_t timeout = std::min(ld_timeout, interval);
  std::string timeout_cut;
  if (timeout < ld_timeout && type != "none") {
    timeout_cut = "ldirectord's timeout of " + plain(ld_timeout) + " is cut to the interval, " +
                  plain(interval) + " (tandem's timeout is at most its interval)";
  }
  if (type != "none") {
    check.set("interval", seconds(interval),
              interval_d.directive == nullptr ? "ldirectord's default checkinterval" : "");
    std::string origin = timeout_from == 0
                             ? (uses_negotiate_timeout ? "ldirectord's default negotiatetimeout"
                                                       : "ldirectord's default checktimeout")
                             : "";
    if (!timeout_cut.empty()) {
      origin = "ldirectord waited " + plain(ld_timeout) +
               (timeout_from == 0 ? " (its default)" : "") +
               "; tandem's timeout is at most the interval";
    }
    check.set("timeout", seconds(timeout), origin);
    check.set("rise", "1", "ldirectord puts a server back on its first good check");
    check.set("fall", std::to_string(fall),
              fall_d.directive == nullptr ? "ldirectord's default failurecount" : "failurecount");
  }
  if (!command.empty()) check.set("command", tomlString(command));

  // Record the check's lines.
  std::string window;
  if (type != "none") {
    std::string t = plain(timeout);
    std::string i = plain(interval);
    int64_t total = fall * timeout + (fall - 1) * interval;
    window = "tandem takes a failed real server out after " + std::to_string(fall) +
             (fall == 1 ? " failed check" : " failed checks") + " (fall = failurecount), within " +
             std::to_string(fall) + " x " + t +
             (fall > 1 ? " + " + std::to_string(fall - 1) + " x " + i : "") + " = " + plain(total) +
             " (timeout x fall + interval x (fall - 1)), and puts it back after one good check " +
             "(rise 1), as ldirectord did" + (timeout_cut.empty() ? "" : "; " + timeout_cut);
  }
  std::string head_keyword = v.keyword + (fwmark ? " = FWMARK" : "");
  rec(v.line, "", head_keyword, window);
  if (checktype_d != nullptr) {
    std::string kw = checktype == "N" ? "checktype = N" : "checktype = " + checktype;
    use(vi, checktype_d, kw);
  }
  if (service_d != nullptr) {
    use(vi, service_d, "service = " + service_d->value,
        negotiate ? "" : "unused: ldirectord reads it for negotiate checks only");
  }
  for (const auto* d : {v_ct, own(v, "negotiatetimeout"), own(v, "connecttimeout")}) {
    if (d != nullptr) {
      bool counts = d->line == timeout_from;
      use(vi, d, d->key, counts || type == "none" ? "" : "not used by this check type");
    }
  }
  if (interval_d.directive != nullptr && !interval_d.global) {
    use(vi, interval_d.directive, "checkinterval");
  }
  if (fall_d.directive != nullptr && !fall_d.global) use(vi, fall_d.directive, "failurecount");
  if (const auto* d = own(v, "checkcount")) use(vi, d, "checkcount");
  if (const auto* d = own(v, "checkport")) {
    if (auto p = ld::parsePort(d->value)) {
      if (type != "none") check.set("port", std::to_string(*p));
      use(vi, d, "checkport");
    } else {
      error(d->line, p.error().message);
    }
  }
  if (const auto* d = own(v, "checkcommand")) {
    if (type == "exec" && (checktype == "external" || checktype == "external-perl")) {
      use(vi, d, "checkcommand");
    } else {
      use(vi, d, "checkcommand (unused)");
    }
  }
}

Importer::CheckKind Importer::checkKind(VirtualImport& vi, const std::string& checktype,
                                        const std::string& service, int64_t check_timeout,
                                        int64_t interval) {
  const ld::VirtualBlock& v = vi.v;
  const bool fwmark = vi.fwmark;
  const uint16_t vport = vi.vport;
  const bool udp = vi.udp;
  CheckKind k;
  std::string& type = k.type;
  std::string& type_comment = k.type_comment;
  std::string& command = k.command;
  bool& uses_negotiate_timeout = k.uses_negotiate_timeout;
  bool& weights_zero = k.weights_zero;
  bool& takes_request = k.takes_request;
  auto connect_check = [&](bool explicit_connect) {
    if (udp) {
      type = "exec";
      command = "ping -n -c 1 -W " + std::to_string(std::min(check_timeout, interval)) +
                " \"$TANDEM_RS_ADDRESS\" >/dev/null 2>&1";
      type_comment = "ldirectord pings the real servers of a udp service";
    } else {
      type = "tcp";
      if (!explicit_connect) type_comment = "a connect check: tandem has no " + service + " check";
    }
  };
  if (checktype == "on" || checktype == "off") {
    type = "none";
    weights_zero = checktype == "off";
    if (weights_zero) type_comment = "ldirectord's checktype = off: every real server at weight 0";
  } else if (checktype == "connect") {
    connect_check(true);
  } else if (checktype == "ping") {
    type = "exec";
    command = "ping -n -c 1 -W " + std::to_string(std::min(check_timeout, interval)) +
              " \"$TANDEM_RS_ADDRESS\" >/dev/null 2>&1";
  } else if (checktype == "external" || checktype == "external-perl") {
    type = "exec";
    std::string program = "/bin/true";
    if (const auto* d = own(v, "checkcommand")) program = ld::unquote(d->value);
    std::string vserver =
        fwmark ? std::to_string(*v.address.fwmark) : v.address.address->address.toString();
    command = shellQuote(program) + " " + vserver + " " + std::to_string(vport) +
              " \"$TANDEM_RS_ADDRESS\" \"$TANDEM_RS_PORT\"";
    if (own(v, "checkcommand") == nullptr) type_comment = "ldirectord's default checkcommand";
  } else {  // negotiate, or N connects per negotiate
    uses_negotiate_timeout = true;
    if (service == "http" || service == "https") {
      type = service;
      takes_request = true;
    } else if (service == "smtp" || service == "submission") {
      type = "smtp";
    } else if (service == "none") {
      type = "none";
    } else if (service == "dns" && own(v, "request") != nullptr) {
      type = "dns";
      takes_request = true;
    } else {
      connect_check(false);
      if (service == "dns") type_comment = "a connect check: the dns check has no request";
    }
  }
  return k;
}

void Importer::importRequestAndReceive(VirtualImport& vi) {
  const ld::VirtualBlock& v = vi.v;
  ConfTable& check = vi.check;
  const std::string& type = vi.type;
  const bool takes_request = vi.takes_request;
  // request and receive.
  if (const auto* d = own(v, "request")) {
    std::string req = ld::unquote(d->value);
    if (takes_request && type == "dns") {
      setDnsRequest(check, req);
      use(vi, d, "request");
    } else if (takes_request) {
      check.set("path", tomlString(httpPath(req)));
      use(vi, d, "request");
    } else {
      use(vi, d, "request (other services)");
    }
  }
  if (const auto* d = own(v, "receive")) {
    std::string rcv = ld::unquote(d->value);
    if (takes_request && type == "dns") {
      check.set("expect_answer", tomlString(rcv));
      use(vi, d, "receive (dns)");
    } else if (takes_request) {
      bool regex = setHttpReceive(check, rcv);
      use(vi, d, "receive",
          regex ? "a regular expression: expect_body_regex, POSIX extended, not Perl" : "");
    } else {
      use(vi, d, "receive (other services)");
    }
  }
  if (const auto* d = own(v, "httpmethod")) {
    std::string m = d->value;
    std::transform(m.begin(), m.end(), m.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (m != "GET" && m != "HEAD") {
      error(d->line, "httpmethod takes GET or HEAD");
    } else if (type == "http" || type == "https") {
      check.set("method", tomlString(m));
      use(vi, d, "httpmethod");
    } else {
      use(vi, d, "httpmethod", "unused: the check is not http");
    }
  }
  if (const auto* d = own(v, "virtualhost")) {
    if (type == "http" || type == "https") {
      check.set("host", tomlString(ld::unquote(d->value)));
      use(vi, d, "virtualhost");
    } else {
      use(vi, d, "virtualhost", "unused: the check is not http");
    }
  }
}

void Importer::recordUnused(VirtualImport& vi) {
  const ld::VirtualBlock& v = vi.v;
  const bool fwmark = vi.fwmark;
  // What tandem has no use for.
  for (const auto& d : v.directives) {
    if (vi.used.count(&d)) continue;
    // A line overridden by a later one of the same block: ldirectord takes the last one.
    const ld::Directive* last = own(v, d.key);
    use(vi, &d, virtualKeyword(d, fwmark),
        last != &d ? "overridden by line " + std::to_string(last->line) : "");
  }
}

void Importer::importRealServers(VirtualImport& vi) {
  const ld::VirtualBlock& v = vi.v;
  const bool fwmark = vi.fwmark;
  const bool ipv6 = vi.ipv6;
  const uint16_t vport = vi.vport;
  const std::string& service_forwarding = vi.service_forwarding;
  const std::string& type = vi.type;
  const bool takes_request = vi.takes_request;
  const bool weights_zero = vi.weights_zero;
  // The real servers.
  std::vector<ConfTable>& reals = vi.reals;
  std::map<std::string, int> seen_reals;
  for (const auto& r : v.reals) {
    const ld::RealSpec& s = r.spec;
    std::string fwd = forwardingOf(s.method);
    std::optional<uint16_t> port = s.port;
    std::string port_detail;
    // ldirectord gives gate and ipip servers the virtual's port: only nat can map ports.
    if (!fwmark && s.method != "masq" && port && *port != vport) {
      port_detail = "ldirectord used the virtual's port " + std::to_string(vport) + " for " +
                    s.method + ", and so does tandem";
      port = vport;
    }
    if (fwmark && s.method == "masq" && !port) {
      error(r.line,
            "a masq real server of a firewall-mark service needs a port: write "
            "real=ADDRESS:PORT masq");
      continue;
    }
    if (s.weight && *s.weight > 65535) {
      error(r.line, "weight " + std::to_string(*s.weight) + " is out of range: use 0 to 65535");
      continue;
    }
    if (s.lower_threshold && s.upper_threshold && *s.lower_threshold > *s.upper_threshold) {
      error(r.line, "the lower threshold l: is above the upper one u:; IPVS refuses that");
      continue;
    }
    for (auto t : {s.lower_threshold, s.upper_threshold}) {
      if (t && *t > 2147483647) error(r.line, "a threshold is at most 2147483647");
    }
    bool bad_family = false;
    for (const auto& a : s.addresses) {
      if ((a.family == Family::kInet6) != ipv6) bad_family = true;
    }
    if (bad_family) {
      error(r.line, std::string("the real server is not of the virtual service's family: ") +
                        (ipv6 ? "write real6=[ADDRESS]:PORT" : "write real=ADDRESS:PORT"));
      continue;
    }
    for (const auto& a : s.addresses) {
      Endpoint ep{a, port.value_or(0)};
      // As tandem compares them: with the service's port filled in.
      std::string key = Endpoint{a, port.value_or(vport)}.toString();
      if (auto it = seen_reals.find(key); it != seen_reals.end()) {
        error(r.line, "real server " + key + " is listed twice (also at line " +
                          std::to_string(it->second) + "); remove one");
        continue;
      }
      seen_reals[key] = r.line;
      ConfTable rs;
      rs.header = "[[virtual_server.real_server]]";
      rs.set("address", tomlString(ep.toString()),
             s.addresses.size() > 1 ? "from the range at line " + std::to_string(r.line) : "");
      if (weights_zero) {
        rs.set("weight", "0", "checktype = off");
      } else if (s.weight && *s.weight != 1) {
        rs.set("weight", std::to_string(*s.weight));
      }
      if (fwd != service_forwarding) rs.set("forwarding", tomlString(fwd));
      if (s.upper_threshold) {
        rs.set("upper_threshold", std::to_string(*s.upper_threshold));
        if (s.lower_threshold) rs.set("lower_threshold", std::to_string(*s.lower_threshold));
      }
      reals.push_back(std::move(rs));
      if (s.request && takes_request) {
        ConfTable rc;
        rc.header = "[virtual_server.real_server.check]";
        if (type == "dns") {
          setDnsRequest(rc, *s.request);
          rc.set("expect_answer", tomlString(*s.receive));
        } else {
          rc.set("path", tomlString(httpPath(*s.request)));
          (void)setHttpReceive(rc, *s.receive);
        }
        reals.push_back(std::move(rc));
      }
    }
    std::string head = r.keyword == "real6" ? "real6" : "real = ADDRESS " + s.method;
    rec(r.line, "virtual", head, port_detail);
    if (s.range) rec(r.line, "virtual", "real = FIRST->LAST");
    if (s.weight)
      rec(r.line, "virtual", "real WEIGHT", weights_zero ? "0 with checktype = off" : "");
    if (s.request) {
      rec(r.line, "virtual",
          takes_request ? "real \"request\", \"receive\""
                        : "real \"request\", \"receive\" (other services)");
    }
    if (s.upper_threshold) rec(r.line, "virtual", "real u:N");
    if (s.lower_threshold) {
      rec(r.line, "virtual", "real l:N",
          s.upper_threshold ? ""
                            : "left out: tandem takes a lower threshold with an upper one only");
    }
  }
}

}  // namespace tandem::importer::ldirectord_import
