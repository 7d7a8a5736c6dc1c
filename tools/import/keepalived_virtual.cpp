// keepalived.conf -> tandem.conf: virtual_server blocks, their real servers and checks
// (keepalived_importer.h).
#include "keepalived_importer.h"

namespace tandem::importer::keepalived_import {

bool Importer::timing(const KaStatement& c, Timing& t, std::string_view block) {
  const std::string& k = c.keyword;
  if (k == "delay_loop") {
    t.delay_loop = timer(c);
  } else if (k == "connect_timeout") {
    t.connect_timeout = timer(c);
  } else if (k == "delay_before_retry") {
    t.delay_before_retry = timer(c);
  } else if (k == "retry" || k == "nb_get_retry") {
    if (auto v = number(c, 0, 99)) t.retry = static_cast<int>(*v);
  } else if (k == "alpha") {
    t.alpha = c.args.empty() || lower(c.args[0]) == "yes" || lower(c.args[0]) == "on" ||
              c.args[0] == "true" || c.args[0] == "1";
  } else if (k == "virtualhost") {
    if (const std::string* a = arg(c, "a host name")) t.virtualhost = *a;
  } else {
    return false;
  }
  rec(c, block, k);
  return true;
}

void Importer::merge(Timing& into, const Timing& over) {
  if (over.delay_loop) into.delay_loop = over.delay_loop;
  if (over.connect_timeout) into.connect_timeout = over.connect_timeout;
  if (over.delay_before_retry) into.delay_before_retry = over.delay_before_retry;
  if (over.retry) into.retry = over.retry;
  if (over.alpha) into.alpha = over.alpha;
  if (over.virtualhost) into.virtualhost = over.virtualhost;
}

std::optional<std::string> Importer::forwarding(const KaStatement& c) {
  const std::string* a = arg(c, "NAT, DR or TUN");
  if (a == nullptr) return std::nullopt;
  std::string f = lower(*a);
  if (f == "nat" || f == "dr" || f == "tun") return f;
  error(c, c.keyword + " " + *a + ": not NAT, DR or TUN");
  return std::nullopt;
}

// The services a virtual_server line names: one, or a virtual_server_group's members. nullopt
// when the line is wrong (reported).
std::optional<std::vector<ServiceSpec>> Importer::expandServices(const KaStatement& s) {
  std::vector<ServiceSpec> expanded;
  auto failed = [this](const KaStatement& at, std::string message) {
    error(at, std::move(message));
    return std::optional<std::vector<ServiceSpec>>();
  };
  if (s.args.size() >= 2 && s.args[0] == "group") {
    auto it = groups_.find(s.args[1]);
    if (it == groups_.end()) {
      return failed(s, "virtual_server group " + s.args[1] +
                           ": no virtual_server_group of that name; define it");
    }
    for (const auto& m : it->second) {
      ServiceSpec spec;
      spec.file = s.file;
      spec.line = s.line;
      spec.address = m.address;
      spec.fwmark = m.fwmark;
      expanded.push_back(spec);
    }
    rec(s, "virtual_server", "virtual_server",
        "group " + s.args[1] + ": " + std::to_string(expanded.size()) + " services");
  } else if (s.args.size() >= 2 && s.args[0] == "fwmark") {
    auto v = integer(s.args[1], 1, 4294967295);
    if (!v) return failed(s, "fwmark " + s.args[1] + ": not a mark from 1 to 4294967295");
    ServiceSpec spec{s.file, s.line, "", *v, {}, false, {}};
    expanded.push_back(spec);
    rec(s, "virtual_server", "virtual_server");
  } else if (s.args.size() >= 1) {
    auto ip = IpAddress::parse(s.args[0]);
    if (!ip) return failed(s, "virtual_server " + s.args[0] + ": not an IP address");
    auto port = s.args.size() >= 2 ? integer(s.args[1], 0, 65535) : std::optional<int64_t>(0);
    if (!port) return failed(s, "virtual_server " + s.args[1] + ": not a port");
    ServiceSpec spec{s.file, s.line, hostPort(*ip, static_cast<uint16_t>(*port)), std::nullopt, {},
                     false,  {}};
    expanded.push_back(spec);
    rec(s, "virtual_server", "virtual_server");
  } else {
    return failed(s, "virtual_server needs IP PORT, fwmark N or group NAME");
  }
  return expanded;
}

void Importer::virtualServer(const KaStatement& s) {
  auto services = expandServices(s);
  if (!services) return;
  std::vector<ServiceSpec> expanded = std::move(*services);
  ServiceSpec common;
  Timing vs_timing;
  bool inhibit = false;
  std::vector<const KaStatement*> reals;
  std::optional<IpAddress> first_ip;
  for (const auto& e : expanded) {
    if (!e.address.empty()) first_ip = Endpoint::parse(e.address, true)->address;
  }
  for (const auto& c : s.children) {
    const std::string& k = c.keyword;
    if (timing(c, vs_timing, "virtual_server")) continue;
    if (k == "lb_algo" || k == "lvs_sched") {
      if (const std::string* a = arg(c, "a scheduler"))
        setKey(common.keys, "scheduler", tomlString(lower(*a)));
    } else if (k == "lb_kind" || k == "lvs_method") {
      if (auto f = forwarding(c)) setKey(common.keys, "forwarding", tomlString(*f));
    } else if (k == "persistence_timeout") {
      int64_t ms = 360000;
      if (!c.args.empty()) {
        auto v = integer(c.args[0], 1, 31536000);
        if (!v) return error(c, "persistence_timeout " + c.args[0] + ": not a number of seconds");
        ms = *v * 1000;
      }
      setKey(common.keys, "persistence_timeout", tomlDuration(ms));
    } else if (k == "persistence_granularity") {
      const std::string* a = arg(c, "a netmask");
      if (a == nullptr) return;
      if (auto len = integer(*a, 1, 128)) {
        setKey(common.keys, "persistence_netmask", std::to_string(*len));
      } else {
        setKey(common.keys, "persistence_netmask", tomlString(*a));
      }
    } else if (k == "protocol") {
      const std::string* a = arg(c, "TCP, UDP or SCTP");
      if (a == nullptr) return;
      std::string p = lower(*a);
      if (p != "tcp" && p != "udp" && p != "sctp")
        return error(c, "protocol " + *a + ": not TCP, UDP or SCTP");
      setKey(common.keys, "protocol", tomlString(p));
      if (std::all_of(expanded.begin(), expanded.end(),
                      [](const auto& e) { return e.fwmark.has_value(); })) {
        report_.dropped(c.file, c.line, "virtual_server.protocol", "virtual_server.fwmark",
                        "a fwmark service matches every protocol its mark covers");
        continue;
      }
    } else if (k == "ops") {
      setKey(common.keys, "one_packet", "true");
    } else if (k == "ip_family") {
      const std::string* a = arg(c, "inet or inet6");
      if (a == nullptr) return;
      setKey(common.keys, "family", tomlString(*a == "inet6" ? "ipv6" : "ipv4"));
    } else if (k == "sh-port" || k == "mh-port" || k == "sh-fallback" || k == "mh-fallback") {
      flags_.push_back(k.substr(3));
    } else if (k == "sorry_server") {
      const std::string* a = arg(c, "an address and port");
      if (a == nullptr) return;
      auto ip = IpAddress::parse(*a);
      if (!ip) return error(c, "sorry_server " + *a + ": not an IP address");
      uint16_t port = 0;
      if (c.args.size() >= 2) {
        auto p = integer(c.args[1], 0, 65535);
        if (!p) return error(c, "sorry_server " + c.args[1] + ": not a port");
        port = static_cast<uint16_t>(*p);
      }
      setKey(common.keys, "fallback", tomlString(port ? hostPort(*ip, port) : ip->toString()));
    } else if (k == "inhibit_on_failure") {
      inhibit = true;
    } else if (k == "real_server") {
      reals.push_back(&c);
      continue;  // recorded in realServer
    } else {
      recBlock(c, "virtual_server");
      continue;
    }
    rec(c, "virtual_server", k);
  }
  if (!flags_.empty()) {
    std::vector<std::string> flags;
    for (const auto& f : flags_) {
      if (std::find(flags.begin(), flags.end(), f) == flags.end()) flags.push_back(f);
    }
    setKey(common.keys, "scheduler_flags", tomlStrings(flags));
    flags_.clear();
  }
  std::vector<RealSpec> real_specs;
  for (const KaStatement* r : reals) {
    if (auto spec = realServer(*r, vs_timing, inhibit)) real_specs.push_back(std::move(*spec));
  }
  setKey(common.keys, "on_failure", tomlString(inhibit ? "quiescent" : "remove"));
  for (auto& e : expanded) {
    e.keys = common.keys;
    if (e.fwmark) {
      // A fwmark service has no protocol of its own: the mark covers it.
      std::erase_if(e.keys, [](const auto& kv) { return kv.first == "protocol"; });
    }
    e.inhibit = inhibit;
    for (const auto& r : real_specs) {
      bool nat = true;
      for (const Keys* keys : {static_cast<const Keys*>(&e.keys), &r.keys}) {
        for (const auto& [k, v] : *keys) {
          if (k == "forwarding") nat = v == tomlString("nat");
        }
      }
      auto ep = Endpoint::parse(r.address, true);
      if (e.fwmark && nat && ep && ep->port == 0) {
        report_.dropped(s.file, s.line, "virtual_server.real_server", "",
                        "real server " + r.address + " of fwmark " + std::to_string(*e.fwmark) +
                            " has no port: keepalived keeps each packet's port, tandem needs "
                            "one for nat; left out: add it with its port, or use dr");
        continue;
      }
      if (!e.address.empty() && r.address == e.address) {
        report_.dropped(s.file, s.line, "virtual_server.real_server", "",
                        "real server " + r.address + " is the service " + e.address +
                            " itself (a group member), which would loop: left out of it");
        continue;
      }
      e.reals.push_back(r);
    }
    d_.services.push_back(std::move(e));
  }
}

std::optional<RealSpec> Importer::realServer(const KaStatement& r, const Timing& vs_timing,
                                             bool& inhibit) {
  auto ip = r.args.empty() ? std::nullopt : IpAddress::parse(r.args[0]);
  if (!ip) {
    error(r, "real_server needs an IP address and port, as real_server 198.51.100.21 80");
    return std::nullopt;
  }
  uint16_t port = 0;
  if (r.args.size() >= 2) {
    auto p = integer(r.args[1], 0, 65535);
    if (!p) {
      error(r, "real_server " + r.args[1] + ": not a port");
      return std::nullopt;
    }
    port = static_cast<uint16_t>(*p);
  }
  rec(r, "virtual_server", "real_server");
  RealSpec spec;
  spec.address = port != 0 ? hostPort(*ip, port) : ip->toString();
  Timing t = vs_timing;
  Timing rs_timing;
  const KaStatement* checker = nullptr;
  for (const auto& c : r.children) {
    const std::string& k = c.keyword;
    if (timing(c, rs_timing, "real_server")) continue;
    if (k == "weight") {
      if (auto v = number(c, 0, 65535)) setKey(spec.keys, "weight", std::to_string(*v));
    } else if (k == "lvs_method") {
      if (auto f = forwarding(c)) setKey(spec.keys, "forwarding", tomlString(*f));
    } else if (k == "uthreshold" || k == "lthreshold") {
      if (auto v = number(c, 0, 4294967295)) {
        setKey(spec.keys, k == "uthreshold" ? "upper_threshold" : "lower_threshold",
               std::to_string(*v));
      }
    } else if (k == "inhibit_on_failure") {
      inhibit = true;
    } else if (k == "TCP_CHECK" || k == "HTTP_GET" || k == "SSL_GET" || k == "SMTP_CHECK" ||
               k == "DNS_CHECK" || k == "UDP_CHECK" || k == "MISC_CHECK") {
      if (checker != nullptr) {
        rec(c, "real_server", "second check", c.keyword + ", with its block");
      } else {
        checker = &c;
      }
      continue;
    } else {
      recBlock(c, "real_server");
      continue;
    }
    rec(c, "real_server", k);
  }
  merge(t, rs_timing);
  if (checker != nullptr) spec.check = check(*checker, t);
  return spec;
}

CheckSpec Importer::check(const KaStatement& c, Timing t) {
  const std::string& kind = c.keyword;
  CheckSpec spec;
  spec.type = kind == "TCP_CHECK"    ? "tcp"
              : kind == "HTTP_GET"   ? "http"
              : kind == "SSL_GET"    ? "https"
              : kind == "SMTP_CHECK" ? "smtp"
              : kind == "DNS_CHECK"  ? "dns"
              : kind == "UDP_CHECK"  ? "udp"
                                     : "exec";
  Timing ct;
  std::optional<int64_t> misc_timeout;
  bool first_url = true;
  if (spec.type == "http" || spec.type == "https") {
    setKey(spec.keys, "expect_status", tomlStrings({"200-299"}));  // keepalived's default
  }
  if (spec.type == "dns") {
    setKey(spec.keys, "query_type", tomlString("SOA"));  // keepalived's defaults
    setKey(spec.keys, "query_name", tomlString("."));
  }
  std::vector<const KaStatement*> later;  // recorded after the checker line, in order
  for (const auto& o : c.children) {
    const std::string& k = o.keyword;
    if (timing(o, ct, "CHECK")) continue;
    if (k == "connect_port") {
      if (auto v = number(o, 1, 65535)) setKey(spec.keys, "port", std::to_string(*v));
    } else if (k == "bindto") {
      const std::string* a = arg(o, "an address");
      if (a && IpAddress::parse(*a))
        setKey(spec.keys, "source_address", tomlString(*a));
      else if (a)
        error(o, "bindto " + *a + ": not an IP address");
    } else if (k == "url" && (spec.type == "http" || spec.type == "https")) {
      if (!first_url) {
        rec(o, "HTTP_GET", "url", "a second url, not carried");
        continue;
      }
      first_url = false;
      rec(o, "HTTP_GET", "url");
      for (const auto& u : o.children) url(u, spec);
      continue;
    } else if (k == "helo_name" && spec.type == "smtp") {
      if (const std::string* a = arg(o, "a name")) setKey(spec.keys, "helo", tomlString(*a));
      rec(o, "SMTP_CHECK", k);
      continue;
    } else if ((k == "type" || k == "name") && spec.type == "dns") {
      if (const std::string* a = arg(o, k == "type" ? "a record type" : "a name")) {
        setKey(spec.keys, k == "type" ? "query_type" : "query_name",
               tomlString(k == "type" ? upper(*a) : *a));
      }
      rec(o, "DNS_CHECK", k);
      continue;
    } else if ((k == "payload" || k == "require_reply") && spec.type == "udp") {
      udpHex(o, spec);
      continue;
    } else if (k == "misc_path" && spec.type == "exec") {
      if (arg(o, "a command") != nullptr)
        setKey(spec.keys, "command", tomlString(joinArgs(o.args)));
      rec(o, "MISC_CHECK", k);
      continue;
    } else if (k == "misc_timeout" && spec.type == "exec") {
      misc_timeout = timer(o);
      rec(o, "MISC_CHECK", k);
      continue;
    } else if (k == "misc_dynamic" && spec.type == "exec") {
      setKey(spec.keys, "exit_weight", "true");
      rec(o, "MISC_CHECK", k);
      continue;
    } else {
      std::string_view block = spec.type == "http" || spec.type == "https" ? "HTTP_GET"
                               : spec.type == "smtp"                       ? "SMTP_CHECK"
                               : spec.type == "udp"                        ? "UDP_CHECK"
                               : spec.type == "exec"                       ? "MISC_CHECK"
                                                                           : "CHECK";
      recBlock(o, block);
      continue;
    }
    rec(o, "CHECK", k);
  }
  merge(t, ct);
  if (t.virtualhost && (spec.type == "http" || spec.type == "https")) {
    bool has_host = std::any_of(spec.keys.begin(), spec.keys.end(),
                                [](const auto& kv) { return kv.first == "host"; });
    if (!has_host) setKey(spec.keys, "host", tomlString(*t.virtualhost));
  }
  if (spec.type == "udp" && std::none_of(spec.keys.begin(), spec.keys.end(),
                                         [](const auto& kv) { return kv.first == "payload"; })) {
    // keepalived sends random bytes; tandem needs a payload, and a service that answers
    // nothing is healthy unless it refuses (ICMP port unreachable).
    setKey(spec.keys, "payload", tomlString("tandem"));
    setKey(spec.keys, "accept_silence", "true");
  }
  // The timing, with keepalived's defaults, and the failure windows the report predicts.
  int64_t delay_loop = t.delay_loop.value_or(60000);
  int retry = t.retry.value_or(spec.type == "dns" ? 3 : spec.type == "exec" ? 0 : 1);
  int64_t dbr = t.delay_before_retry.value_or(spec.type == "http" || spec.type == "https" ? 3000
                                              : spec.type == "dns" ? delay_loop
                                                                   : 1000);
  int64_t timeout =
      spec.type == "exec" ? misc_timeout.value_or(delay_loop) : t.connect_timeout.value_or(5000);
  spec.interval = std::max<int64_t>(delay_loop, 100);
  spec.timeout = std::clamp<int64_t>(timeout, 10, spec.interval);
  spec.fall = std::clamp(retry + 1, 1, 100);
  spec.alpha = t.alpha.value_or(false);
  std::string detail = "tandem takes a failed real server out after " + std::to_string(spec.fall) +
                       " failed check" + (spec.fall == 1 ? "" : "s") + " " +
                       seconds(spec.interval) + " apart: within " +
                       seconds(spec.fall * spec.interval) + " of a refusal (keepalived: within " +
                       seconds(delay_loop + static_cast<int64_t>(retry) * dbr) + ")";
  if (timeout > spec.interval) {
    detail += "; the timeout " + seconds(timeout) + " is cut to the interval";
  }
  rec(c, "real_server", kind, detail);
  return spec;
}

void Importer::url(const KaStatement& u, CheckSpec& spec) {
  const std::string& k = u.keyword;
  if (k == "path") {
    if (const std::string* a = arg(u, "a path")) setKey(spec.keys, "path", tomlString(*a));
  } else if (k == "status_code") {
    std::vector<std::string> codes;
    for (const auto& a : u.args) {
      auto dash = a.find('-');
      auto lo = integer(a.substr(0, dash), 100, 599);
      auto hi = dash == std::string::npos ? lo : integer(a.substr(dash + 1), 100, 599);
      if (!lo || !hi || *hi < *lo)
        return error(u, "status_code " + a + ": not a code or range from 100 to 599");
      codes.push_back(a);
    }
    if (codes.empty()) return error(u, "status_code needs a code, as 200 or 200-299");
    setKey(spec.keys, "expect_status", tomlStrings(codes));
  } else if (k == "virtualhost") {
    if (const std::string* a = arg(u, "a host name")) setKey(spec.keys, "host", tomlString(*a));
  } else if (k == "regex") {
    if (const std::string* a = arg(u, "a regular expression")) {
      setKey(spec.keys, "expect_body_regex", tomlString(*a));
    }
  }
  rec(u, "url", k);
}

void Importer::udpHex(const KaStatement& o, CheckSpec& spec) {
  std::string hex;
  for (const auto& a : o.args) hex += a;
  std::string bytes;
  bool printable = true;
  bool wildcard = false;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    int hi = nib(hex[i]), lo = nib(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      wildcard = true;
      break;
    }
    char ch = static_cast<char>(hi * 16 + lo);
    if (ch < 0x20 || ch > 0x7e) printable = false;
    bytes += ch;
  }
  bool is_payload = o.keyword == "payload";
  if (hex.empty() && !is_payload) {
    rec(o, "UDP_CHECK", o.keyword);  // any reply: tandem's default
    return;
  }
  if (!printable || wildcard || hex.size() % 2 != 0 || bytes.empty()) {
    report_.dropped(
        o.file, o.line, "UDP_CHECK." + o.keyword,
        is_payload ? "virtual_server.check.payload" : "virtual_server.check.expect_reply",
        "the bytes are not printable text, which tandem's check sends and expects");
    if (is_payload) setKey(spec.keys, "payload", tomlString("tandem"));
    return;
  }
  setKey(spec.keys, is_payload ? "payload" : "expect_reply", tomlString(bytes));
  rec(o, "UDP_CHECK", o.keyword);
}

}  // namespace tandem::importer::keepalived_import
