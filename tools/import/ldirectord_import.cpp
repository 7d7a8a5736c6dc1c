// importLdirectord: ldirectord.cf -> a complete tandem.conf and a report of every line.
//
// ldirectord resolves most of a virtual service's settings late (a virtual's own value, else
// the global one, else a default that depends on the check type or the port); this file
// resolves them the same way, so that the tandem.conf behaves as ldirectord did, and says
// where it cannot.
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string_view>

#include "common/text.h"
#include "conf_draft.h"
#include "importer.h"
#include "ldirectord_parser.h"
#include "mapping.h"

namespace tandem::importer {

namespace {

namespace ld = ldirectord;

// Where ldirectord accepts each directive.
constexpr auto kGlobalOnly = std::to_array<std::string_view>(
    {"autoreload", "callback", "logfile", "execute", "fork", "supervised", "readdquiescent",
     "maintenancedir", "emailalertfrom"});
constexpr auto kEither = std::to_array<std::string_view>(
    {"checktimeout", "negotiatetimeout", "connecttimeout", "checkinterval", "failurecount",
     "checkcount", "fallback", "fallback6", "fallbackcommand", "quiescent", "emailalert",
     "emailalertfreq", "emailalertstatus", "smtp", "cleanstop"});
constexpr auto kVirtualOnly = std::to_array<std::string_view>(
    {"request",     "receive",     "checktype",   "checkcommand", "checkport", "login",
     "passwd",      "database",    "secret",      "load",         "scheduler", "persistent",
     "schedflags",  "netmask",     "protocol",    "ops",          "service",   "httpmethod",
     "virtualhost", "monitorfile", "servicename", "comment"});
constexpr auto kServices = std::to_array<std::string_view>(
    {"dns",  "ftp",   "http",   "https",     "http_proxy", "imap",   "imaps",
     "ldap", "ldaps", "mysql",  "nntp",      "none",       "oracle", "pgsql",
     "pop",  "pops",  "radius", "simpletcp", "sip",        "smtp",   "submission"});
constexpr auto kSchedulers =
    std::to_array<std::string_view>({"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed",
                                     "nq", "mh", "fo", "ovf", "twos"});
// Directives that take yes or no.
constexpr auto kYesNo = std::to_array<std::string_view>(
    {"autoreload", "fork", "supervised", "quiescent", "readdquiescent", "cleanstop", "ops"});

template <size_t N>
bool among(const std::array<std::string_view, N>& set, std::string_view s) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

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

std::string seconds(int64_t s) { return tomlDuration(s * 1000); }
// The same without the quotes, for prose: "1m30s".
std::string plain(int64_t s) {
  std::string q = seconds(s);
  return q.substr(1, q.size() - 2);
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

class Importer {
 public:
  Importer(const std::string& file, const ImportOptions& options)
      : file_(file), options_(options) {}

  ImportResult run(std::string_view text);

 private:
  struct Effective {
    const ld::Directive* directive = nullptr;  // the virtual's own, else the global one
    bool global = false;
  };

  // Each problem once, though a value shared by several virtual services is read by each.
  void error(int line, std::string message) {
    for (const auto& e : errors_) {
      if (e.line == line && e.message == message) return;
    }
    errors_.push_back({file_, line, std::move(message)});
  }
  void rec(int line, std::string_view block, std::string_view keyword,
           const std::string& detail = "") {
    record(report_, Source::kLdirectord, file_, line, block, keyword, detail);
  }
  std::string where(int line) const { return file_ + ":" + std::to_string(line); }

  void checkKeys();
  void recordGlobals();
  void importVirtual(const ld::VirtualBlock& v);
  void writeCluster();

  const ld::Directive* global(std::string_view key) const {
    const ld::Directive* found = nullptr;
    for (const auto& d : config_.globals) {
      if (d.key == key) found = &d;
    }
    return found;
  }
  static const ld::Directive* own(const ld::VirtualBlock& v, std::string_view key) {
    const ld::Directive* found = nullptr;
    for (const auto& d : v.directives) {
      if (d.key == key) found = &d;
    }
    return found;
  }
  // A number from a directive, within [lo, hi]; an error (and nullopt) otherwise.
  std::optional<int64_t> number(const ld::Directive& d, int64_t lo, int64_t hi,
                                std::string_view why) {
    auto n = ld::parseCount(ld::unquote(d.value), d.key);
    if (!n) {
      error(d.line, n.error().message);
      return std::nullopt;
    }
    if (*n < lo || *n > hi) {
      error(d.line, d.key + " " + std::to_string(*n) + " is out of range: use " +
                        std::to_string(lo) + " to " + std::to_string(hi) + " (" + std::string(why) +
                        ")");
      return std::nullopt;
    }
    return *n;
  }

  const std::string& file_;
  const ImportOptions& options_;
  ld::Config config_;
  std::vector<ImportError> errors_;
  Report report_;
  ConfDraft draft_;
  std::vector<ConfTable> services_;  // the virtual servers' tables, in order
  std::vector<IpAddress> vips_;      // the virtual services' addresses, for the [[vip]] hints
  std::set<std::string> names_;
  std::map<std::string, int> seen_services_;  // identity -> line
  bool quiescent_defaulted_ = false;
};

void Importer::checkKeys() {
  std::vector<std::string> known;
  for (auto set :
       {std::span<const std::string_view>(kGlobalOnly), std::span<const std::string_view>(kEither),
        std::span<const std::string_view>(kVirtualOnly)}) {
    for (auto k : set) known.emplace_back(k);
  }
  auto unknown = [&](const ld::Directive& d) {
    std::string msg = "unknown directive \"" + d.key + "\" (ldirectord refuses it too)";
    if (auto m = closestMatch(d.key, known)) msg += "; did you mean \"" + *m + "\"?";
    error(d.line, msg);
  };
  auto value_check = [&](const ld::Directive& d) {
    if (d.key == "checktype") {
      const std::string& c = d.value;
      bool numeric =
          std::all_of(c.begin(), c.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
      if (!numeric && c != "connect" && c != "negotiate" && c != "ping" && c != "off" &&
          c != "on" && c != "external" && c != "external-perl") {
        error(d.line, "checktype \"" + c +
                          "\" is not connect, negotiate, on, off, ping, external, "
                          "external-perl or a number");
      }
    }
    if (d.key == "service" && !among(kServices, d.value)) {
      error(d.line, "service \"" + d.value +
                        "\" is not one ldirectord knows: use dns, ftp, "
                        "http, https, http_proxy, imap, imaps, ldap, ldaps, mysql, nntp, none, "
                        "oracle, pgsql, pop, pops, radius, simpletcp, sip, smtp or submission");
    }
  };
  auto yes_no = [&](const ld::Directive& d) {
    if (among(kYesNo, d.key) && d.value != "yes" && d.value != "no") {
      error(d.line, d.key + " takes yes or no, not \"" + d.value + "\"");
    }
  };
  for (const auto& d : config_.globals) {
    if (among(kVirtualOnly, d.key) || d.key == "real" || d.key == "real6") {
      error(d.line, d.key + " belongs to a virtual service: indent it under its virtual= line");
    } else if (!among(kGlobalOnly, d.key) && !among(kEither, d.key)) {
      unknown(d);
    } else {
      yes_no(d);
    }
  }
  for (const auto& v : config_.virtuals) {
    for (const auto& d : v.directives) {
      if (among(kGlobalOnly, d.key)) {
        error(d.line, d.key +
                          " is a global directive: write it at the start of a line, before "
                          "the first virtual=");
      } else if (d.key == "virtual" || d.key == "virtual6") {
        error(d.line, d.key + " starts a new virtual service: write it at the start of a line");
      } else if (!among(kEither, d.key) && !among(kVirtualOnly, d.key)) {
        unknown(d);
      } else {
        yes_no(d);
        value_check(d);
      }
    }
  }
}

void Importer::recordGlobals() {
  for (const auto& d : config_.globals) {
    if (d.key == "quiescent") {
      rec(d.line, "global", d.value == "yes" ? "quiescent = yes" : "quiescent = no");
    } else {
      rec(d.line, "global", d.key);
    }
  }
}

ImportResult Importer::run(std::string_view text) {
  ld::ParseResult parsed = ld::parseConfig(text, file_);
  config_ = std::move(parsed.config);
  errors_ = std::move(parsed.errors);
  checkKeys();
  // The global values every virtual service inherits are checked once, at their own line.
  for (const char* key : {"checktimeout", "negotiatetimeout", "connecttimeout"}) {
    if (const auto* d = global(key)) (void)number(*d, 1, 600, "tandem's timeout is 10m at most");
  }
  if (const auto* d = global("checkinterval")) {
    (void)number(*d, 1, 3600, "tandem checks at least hourly");
  }
  if (const auto* d = global("failurecount")) (void)number(*d, 1, 100, "tandem's fall");
  for (const char* key : {"fallback", "fallback6"}) {
    if (const auto* d = global(key)) {
      auto fb = ld::parseFallback(d->value);
      if (!fb) {
        error(d->line, fb.error().message);
      } else if ((fb->address.family == Family::kInet6) != (d->key == "fallback6")) {
        error(d->line, d->key == "fallback6"
                           ? "fallback6 takes an IPv6 address in brackets; write an IPv4 one "
                             "as fallback="
                           : "fallback takes an IPv4 address; write an IPv6 one as fallback6=");
      }
    }
  }
  // Each virtual service even after an error, so that one run names every problem.
  recordGlobals();
  for (const auto& v : config_.virtuals) importVirtual(v);
  ImportResult out;
  if (!errors_.empty()) {
    std::stable_sort(errors_.begin(), errors_.end(),
                     [](const ImportError& a, const ImportError& b) { return a.line < b.line; });
    out.errors = std::move(errors_);
    return out;
  }
  writeCluster();
  out.conf = draft_.render();
  out.report = std::move(report_);
  return out;
}

void Importer::writeCluster() {
  draft_.header({
      "tandem.conf imported from " + file_ + " (ldirectord).",
      "",
      "ldirectord ran the IPVS part only: heartbeat or Pacemaker held the VIPs and started it on",
      "one director at a time. tandem does both, so before this file is used:",
      "  1. rename the two [[node]] tables to the directors' names in corosync.conf, and list",
      "     the interfaces that carry VIPs in node.interfaces;",
      "  2. add a [[vip]] for every VIP that haresources or Pacemaker's IPaddr2 held (see below);",
      "  3. run `tandem keygen " + options_.key_file +
          "` beside this file and copy the key to the other",
      "     director with its mode (0600);",
      "  4. stop ldirectord and its heartbeat or Pacemaker resources: one IPVS table, one owner;",
      "  5. check it: tandem config verify FILE.",
      "Each virtual service's table names the ldirectord.cf line it came from.",
  });
  ConfTable& cluster = draft_.add("[cluster]");
  cluster.set("name", tomlString("ldirectord"), "one name per cluster, as it appears in logs");
  cluster.set("failback", tomlString("manual"),
              "heartbeat's auto_failback on, or a Pacemaker location preference: \"auto\"");
  ConfTable& key = draft_.add("[[cluster.key]]", {"Create it: tandem keygen " + options_.key_file +
                                                  " (relative paths are beside this file)."});
  key.set("id", "1");
  key.set("file", tomlString(options_.key_file));
  ConfTable& n1 = draft_.add(
      "[[node]]", {"Rename both directors to their node names in corosync.conf (uname -n)."});
  n1.set("name", tomlString("director1"), "rename: this director is preferred");
  n1.set("priority", "150");
  n1.suggest("interfaces", tomlStrings({"eth0"}), "the interfaces the VIPs go on");
  ConfTable& n2 = draft_.add("[[node]]");
  n2.set("name", tomlString("director2"), "rename");
  n2.set("priority", "100");
  n2.suggest("interfaces", tomlStrings({"eth0"}), "the interfaces the VIPs go on");

  std::vector<std::string> vip_lines = {
      "The VIPs: heartbeat's haresources or Pacemaker's IPaddr2 resources held them; tandem holds",
      "them as [[vip]] tables, each on an interface in node.interfaces. The virtual services",
      "below use these addresses; with the prefix of their subnet and their interface:"};
  std::sort(vips_.begin(), vips_.end());
  vips_.erase(std::unique(vips_.begin(), vips_.end()), vips_.end());
  for (const auto& a : vips_) {
    vip_lines.push_back("");
    vip_lines.push_back("[[vip]]");
    vip_lines.push_back("address = " +
                        tomlString(a.toString() + (a.family == Family::kInet ? "/24" : "/64")));
    vip_lines.push_back("interface = \"eth0\"");
  }
  draft_.add("", vip_lines);
  for (auto& t : services_) draft_.add(t.header, t.comments) = std::move(t);

  report_.note(
      "ldirectord has no cluster part: rename the [[node]] tables director1 and director2 to the "
      "directors' node names in corosync.conf, and list their VIP interfaces in node.interfaces");
  report_.note(
      "the VIPs that heartbeat's haresources or Pacemaker's IPaddr2 held become [[vip]] tables "
      "(address/prefix and interface); the file suggests one per virtual service address");
  report_.note(
      "tandem needs corosync: set up corosync.conf with both directors (heartbeat's "
      "ha.cf or Pacemaker's corosync.conf has the nodes)");
  report_.note("create the cluster key beside the config: tandem keygen " + options_.key_file +
               ", and copy it to the other director with mode 0600");
  if (quiescent_defaulted_) {
    report_.note(
        "quiescent is not set: ldirectord's code removes a failed real server (its default is no, "
        "though its man page says yes), so on_failure = \"remove\"; set \"quiescent\" to keep "
        "its connections");
  }
}

void Importer::importVirtual(const ld::VirtualBlock& v) {
  auto eff = [&](std::string_view key) -> Effective {
    if (const auto* d = own(v, key)) return {d, false};
    return {global(key), true};
  };
  const bool fwmark = v.address.fwmark.has_value();
  const bool ipv6 = v.address.ipv6;
  const uint16_t vport = fwmark ? 0 : v.address.address->port;
  ConfTable vs;
  vs.header = "[[virtual_server]]";
  vs.comments.push_back(where(v.line) + ": " + v.keyword + "=" + v.value);
  size_t errors_before = errors_.size();

  // Every directive is recorded once, here or where it is used below.
  std::set<const ld::Directive*> used;
  auto use = [&](const ld::Directive* d, std::string_view keyword, const std::string& detail = "") {
    if (d == nullptr || used.count(d)) return;
    used.insert(d);
    rec(d->line, "virtual", keyword, detail);
  };

  // Protocol: ldirectord's default is udp on port 53.
  std::string protocol = fwmark ? "fwm" : (vport == 53 ? "udp" : "tcp");
  if (const auto* d = own(v, "protocol")) {
    if (fwmark && d->value != "fwm") {
      error(d->line, "protocol must be fwm for a firewall-mark service (ldirectord's rule)");
    } else if (!fwmark && d->value != "tcp" && d->value != "udp") {
      error(d->line, "protocol \"" + d->value +
                         "\" is not tcp or udp (fwm is for a firewall-mark virtual=)");
    } else {
      protocol = d->value;
      use(d, fwmark ? "protocol = fwm" : "protocol");
    }
  }
  const bool udp = protocol == "udp";

  // The name: servicename, else the address; unique.
  std::string name;
  if (const auto* d = own(v, "servicename")) {
    name = ld::unquote(d->value);
    use(d, "servicename");
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
    return;
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
    use(d, "comment");
  }

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
    use(d, "scheduler");
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
    use(d, "schedflags");
  }

  // Forwarding: the first real server's method, and an override for any other.
  auto forwarding = [](std::string_view method) -> std::string {
    if (method == "gate") return "dr";
    if (method == "ipip") return "tun";
    return "nat";
  };
  std::string service_forwarding = v.reals.empty() ? "nat" : forwarding(v.reals[0].spec.method);
  vs.set("forwarding", tomlString(service_forwarding),
         v.reals.empty() ? "no real server: tandem's default" : "");

  if (const auto* d = own(v, "persistent")) {
    if (auto n =
            number(*d, 0, int64_t{576} * 3600, "tandem's persistence_timeout is 576h at most")) {
      if (*n > 0) vs.set("persistence_timeout", tomlString(std::to_string(*n) + "s"));
      use(d, "persistent");
    }
  }
  if (const auto* d = own(v, "netmask")) {
    if (ipv6) {
      if (auto n = number(*d, 1, 128, "an IPv6 prefix length")) {
        vs.set("persistence_netmask", std::to_string(*n));
        use(d, "netmask");
      }
    } else {
      auto mask = IpAddress::parse(d->value);
      if (!mask || mask->family != Family::kInet || !netmaskLength(*mask)) {
        error(d->line, "netmask \"" + d->value +
                           "\" is not a contiguous IPv4 netmask: write it like 255.255.255.0");
      } else {
        vs.set("persistence_netmask", tomlString(mask->toString()));
        use(d, "netmask");
      }
    }
  }
  if (const auto* d = own(v, "ops")) {
    if (d->value == "yes" && !udp && !fwmark) {
      error(d->line, "ops = yes works with protocol = udp only (one-packet scheduling)");
    }
    if (d->value == "yes") vs.set("one_packet", "true");
    use(d, "ops");
  }

  // What happens to a failed real server.
  Effective q = eff("quiescent");
  if (q.directive != nullptr) {
    bool yes = q.directive->value == "yes";
    vs.set("on_failure", tomlString(yes ? "quiescent" : "remove"),
           "quiescent = " + q.directive->value + (q.global ? " (global)" : ""));
    if (!q.global) use(q.directive, yes ? "quiescent = yes" : "quiescent = no");
  } else {
    vs.set("on_failure", tomlString("remove"),
           "ldirectord's code removes a failed server when quiescent is unset");
    quiescent_defaulted_ = true;
  }

  // The fallback server.
  Effective fb = eff(ipv6 ? "fallback6" : "fallback");
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
      if (!spec->method.empty() && forwarding(spec->method) != service_forwarding) {
        detail = "its " + spec->method +
                 " is not kept: tandem forwards to the fallback as the "
                 "service does (" +
                 service_forwarding + ")";
      }
      if (!fb.global) use(fb.directive, fb.directive->key, detail);
    }
  }
  Effective fbc = eff("fallbackcommand");
  if (fbc.directive != nullptr) {
    std::string cmd = ld::unquote(fbc.directive->value);
    std::string args =
        (fwmark ? std::to_string(*v.address.fwmark) + ":0" : v.address.address->toString()) + " " +
        protocol;
    vs.set("notify",
           tomlString("case \"$TANDEM_EVENT\" in vs-down) " + cmd + " start " + args +
                      " ;; vs-up) " + cmd + " stop " + args + " ;; esac"),
           "ldirectord's fallbackcommand" + std::string(fbc.global ? " (global)" : ""));
    if (!fbc.global) use(fbc.directive, "fallbackcommand");
  }

  // The check: its type follows checktype and, for negotiate checks, the service.
  ConfTable check;
  check.header = "[virtual_server.check]";
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

  Effective interval_d = eff("checkinterval");
  int64_t interval = 10;
  if (interval_d.directive != nullptr) {
    interval = number(*interval_d.directive, 1, 3600, "tandem checks at least hourly").value_or(10);
  }
  Effective fall_d = eff("failurecount");
  int64_t fall = 1;
  if (fall_d.directive != nullptr) {
    fall = number(*fall_d.directive, 1, 100, "tandem's fall").value_or(1);
  }

  // The kind of check tandem runs.
  std::string type;
  std::string type_comment;
  bool uses_negotiate_timeout = false;
  bool weights_zero = false;
  bool takes_request = false;  // http, https or dns: request and receive carry over
  std::string command;
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
    use(checktype_d, kw);
  }
  if (service_d != nullptr) {
    use(service_d, "service = " + service_d->value,
        negotiate ? "" : "unused: ldirectord reads it for negotiate checks only");
  }
  for (const auto* d : {v_ct, own(v, "negotiatetimeout"), own(v, "connecttimeout")}) {
    if (d != nullptr) {
      bool counts = d->line == timeout_from;
      use(d, d->key, counts || type == "none" ? "" : "not used by this check type");
    }
  }
  if (interval_d.directive != nullptr && !interval_d.global) {
    use(interval_d.directive, "checkinterval");
  }
  if (fall_d.directive != nullptr && !fall_d.global) use(fall_d.directive, "failurecount");
  if (const auto* d = own(v, "checkcount")) use(d, "checkcount");
  if (const auto* d = own(v, "checkport")) {
    if (auto p = ld::parsePort(d->value)) {
      if (type != "none") check.set("port", std::to_string(*p));
      use(d, "checkport");
    } else {
      error(d->line, p.error().message);
    }
  }
  if (const auto* d = own(v, "checkcommand")) {
    if (type == "exec" && (checktype == "external" || checktype == "external-perl")) {
      use(d, "checkcommand");
    } else {
      use(d, "checkcommand (unused)");
    }
  }
  // request and receive.
  if (const auto* d = own(v, "request")) {
    std::string req = ld::unquote(d->value);
    if (takes_request && type == "dns") {
      setDnsRequest(check, req);
      use(d, "request");
    } else if (takes_request) {
      check.set("path", tomlString(httpPath(req)));
      use(d, "request");
    } else {
      use(d, "request (other services)");
    }
  }
  if (const auto* d = own(v, "receive")) {
    std::string rcv = ld::unquote(d->value);
    if (takes_request && type == "dns") {
      check.set("expect_answer", tomlString(rcv));
      use(d, "receive (dns)");
    } else if (takes_request) {
      bool regex = setHttpReceive(check, rcv);
      use(d, "receive",
          regex ? "a regular expression: expect_body_regex, POSIX extended, not Perl" : "");
    } else {
      use(d, "receive (other services)");
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
      use(d, "httpmethod");
    } else {
      use(d, "httpmethod", "unused: the check is not http");
    }
  }
  if (const auto* d = own(v, "virtualhost")) {
    if (type == "http" || type == "https") {
      check.set("host", tomlString(ld::unquote(d->value)));
      use(d, "virtualhost");
    } else {
      use(d, "virtualhost", "unused: the check is not http");
    }
  }
  // What tandem has no use for.
  for (const auto& d : v.directives) {
    if (used.count(&d)) continue;
    // A line overridden by a later one of the same block: ldirectord takes the last one.
    const ld::Directive* last = own(v, d.key);
    use(&d, virtualKeyword(d, fwmark),
        last != &d ? "overridden by line " + std::to_string(last->line) : "");
  }

  // The real servers.
  std::vector<ConfTable> reals;
  std::map<std::string, int> seen_reals;
  for (const auto& r : v.reals) {
    const ld::RealSpec& s = r.spec;
    std::string fwd = forwarding(s.method);
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
  if (errors_.size() != errors_before) return;

  services_.push_back(std::move(vs));
  services_.push_back(std::move(check));
  for (auto& t : reals) services_.push_back(std::move(t));
}

}  // namespace

ImportResult importLdirectord(const std::string& file, const SourceReader& reader,
                              const ImportOptions& options) {
  auto text = reader.read(file);
  if (!text) {
    ImportResult out;
    out.errors.push_back({file, 0, text.error().message});
    return out;
  }
  return Importer(file, options).run(*text);
}

}  // namespace tandem::importer
