// keepalived.conf -> tandem.conf. The parser gives a statement tree; this walks it once,
// reporting every line through the mapping table, and collects what it finds into a small model
// of the result (one director's worth per file), which is then written out as TOML. With two
// files, the second gives the second [[node]], and every other difference is reported.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "common/ip_address.h"
#include "conf_draft.h"
#include "importer.h"
#include "keepalived_parser.h"
#include "mapping.h"

namespace tandem::importer {

namespace {

constexpr Source K = Source::kKeepalived;
constexpr int64_t kMaxRange = 256;  // members one virtual_server_group range may expand to

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// keepalived's TIMER: seconds, with up to six decimals ("1.5").
std::optional<int64_t> timerMs(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  int64_t whole = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (i == 9) return std::nullopt;  // past 9 digits it is no time (nor an int64)
    whole = whole * 10 + (text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  int64_t ms = whole * 1000;
  if (i < text.size()) {
    if (text[i] != '.') return std::nullopt;
    int64_t scale = 100;
    for (++i; i < text.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
      ms += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  return ms;
}

std::optional<int64_t> integer(const std::string& text, int64_t lo, int64_t hi) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  int64_t v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

std::string seconds(int64_t ms) {
  std::string s = tomlDuration(ms);
  return s.substr(1, s.size() - 2);
}

std::string joinArgs(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

using Keys = std::vector<std::pair<std::string, std::string>>;  // key -> TOML literal

void setKey(Keys& keys, const std::string& key, std::string value) {
  for (auto& [k, v] : keys) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  keys.emplace_back(key, std::move(value));
}

// Timing settings that a virtual server, a real server and a checker can each set; the innermost
// wins.
struct Timing {
  std::optional<int64_t> delay_loop, connect_timeout, delay_before_retry;
  std::optional<int> retry;
  std::optional<bool> alpha;
  std::optional<std::string> virtualhost;
};

struct CheckSpec {
  std::string type;  // tandem's
  Keys keys;         // without interval, timeout, rise, fall
  int64_t interval = 0, timeout = 0;
  int fall = 1;
  bool alpha = false;
  bool operator==(const CheckSpec&) const = default;
};

struct RealSpec {
  std::string address;  // host:port
  Keys keys;            // weight, forwarding, thresholds
  std::optional<CheckSpec> check;
};

struct ServiceSpec {
  std::string file;
  int line = 0;
  std::string address;  // host:port, or empty for fwmark
  std::optional<int64_t> fwmark;
  Keys keys;
  bool inhibit = false;
  std::vector<RealSpec> reals;
};

struct VipSpec {
  std::string address;  // prefix
  std::string interface;
  std::string label;
  bool operator==(const VipSpec&) const = default;
};

// What one keepalived.conf says.
struct Director {
  std::string file;
  std::string name;
  std::optional<int> priority;
  std::string state;
  std::vector<std::string> interfaces;
  std::optional<std::string> failback;  // "auto", "manual", "delayed"
  std::optional<int64_t> failback_delay, advert_ms;
  std::vector<VipSpec> vips;
  Keys notify, sync, ipvs, announce;
  std::vector<ServiceSpec> services;
};

struct GroupMember {
  std::string address;
  std::optional<int64_t> fwmark;
  std::string file;
  int line = 0;
};

class Importer {
 public:
  Importer(Report& report, std::vector<ImportError>& errors) : report_(report), errors_(errors) {}

  Director run(const KaParse& parse) {
    for (const auto& s : parse.consumed) {
      record(report_, K, s.file, s.line, "",
             s.what.rfind("include", 0) == 0 ? "include" : "$NAME=");
    }
    for (const auto& s : parse.skipped) record(report_, K, s.file, s.line, "", "@ID", s.what);
    // Groups first: a virtual_server may name one defined below it.
    for (const auto& s : parse.statements) {
      if (s.keyword == "virtual_server_group") group(s);
    }
    for (const auto& s : parse.statements) top(s);
    return std::move(d_);
  }

 private:
  void error(const KaStatement& s, std::string message) {
    errors_.push_back({s.file, s.line, std::move(message)});
  }
  void rec(const KaStatement& s, std::string_view block, std::string_view keyword,
           const std::string& detail = "") {
    record(report_, K, s.file, s.line, block, keyword, detail);
  }
  // A statement's one argument; an error (naming the keyword and what it takes) if absent.
  const std::string* arg(const KaStatement& s, const char* what) {
    if (s.args.empty()) {
      error(s, s.keyword + " needs " + what);
      return nullptr;
    }
    return &s.args[0];
  }
  std::optional<int64_t> timer(const KaStatement& s) {
    const std::string* a = arg(s, "a time in seconds");
    if (a == nullptr) return std::nullopt;
    auto v = timerMs(*a);
    if (!v || *v > 86400000) {
      error(s, s.keyword + " " + *a + ": not a time in seconds (as 3 or 1.5, up to a day)");
    }
    return v;
  }
  std::optional<int64_t> number(const KaStatement& s, int64_t lo, int64_t hi) {
    const std::string* a = arg(s, "a number");
    if (a == nullptr) return std::nullopt;
    auto v = integer(*a, lo, hi);
    if (!v) {
      error(s, s.keyword + " " + *a + ": not a number from " + std::to_string(lo) + " to " +
                   std::to_string(hi));
    }
    return v;
  }
  static size_t lineCount(const KaStatement& s) {
    size_t n = s.children.size();
    for (const auto& c : s.children) n += lineCount(c);
    return n;
  }
  // A statement tandem does not carry, with its block: one entry, the block's lines with it.
  void recBlock(const KaStatement& s, std::string_view block) {
    size_t n = lineCount(s);
    rec(s, block, s.keyword,
        n == 0 ? "" : "with its block of " + std::to_string(n) + " line" + (n == 1 ? "" : "s"));
  }

  void top(const KaStatement& s) {
    if (s.keyword == "global_defs") {
      for (const auto& c : s.children) globalDef(c);
    } else if (s.keyword == "vrrp_instance") {
      instance(s);
    } else if (s.keyword == "vrrp_sync_group") {
      syncGroup(s);
    } else if (s.keyword == "vrrp_script") {
      rec(s, "vrrp_script", "vrrp_script");
    } else if (s.keyword == "virtual_server") {
      virtualServer(s);
    } else if (s.keyword == "virtual_server_group") {
      // done in group()
    } else {
      rec(s, "", s.keyword);
    }
  }

  void globalDef(const KaStatement& c) {
    const std::string& k = c.keyword;
    if (k == "router_id") {
      if (const std::string* a = arg(c, "a name")) d_.name = *a;
      rec(c, "global_defs", k);
    } else if (k == "lvs_sync_daemon") {
      if (c.args.empty()) return error(c, "lvs_sync_daemon needs an interface");
      setKey(d_.sync, "enabled", "true");
      setKey(d_.sync, "interface", tomlString(c.args[0]));
      for (size_t i = 1; i + 1 < c.args.size(); ++i) {
        if (c.args[i] == "id") {
          if (auto id = integer(c.args[i + 1], 0, 255))
            setKey(d_.sync, "sync_id", std::to_string(*id));
        }
      }
      rec(c, "global_defs", k);
    } else if (k == "lvs_timeouts") {
      for (size_t i = 0; i + 1 < c.args.size(); i += 2) {
        std::string what = lower(c.args[i]);
        auto v = integer(c.args[i + 1], 0, 31536000);
        if (!v)
          return error(
              c, "lvs_timeouts " + c.args[i] + " " + c.args[i + 1] + ": not a number of seconds");
        if (what == "tcp" || what == "tcpfin" || what == "udp") {
          setKey(d_.ipvs, what + "_timeout", tomlDuration(*v * 1000));
        }
      }
      rec(c, "global_defs", k);
    } else if (announce(c, k.substr(5))) {  // vrrp_garp_*: the garp_* of every instance
      rec(c, "global_defs", k);
    } else {
      recBlock(c, "global_defs");
    }
  }

  // keepalived's gratuitous ARP settings (garp_*), which become every VIP's announce_*; false
  // for another keyword.
  bool announce(const KaStatement& c, const std::string& garp) {
    if (garp == "garp_master_delay" || garp == "garp_master_refresh" || garp == "garp_interval") {
      if (auto v = timer(c)) {
        setKey(d_.announce,
               garp == "garp_master_delay"     ? "announce_second_burst"
               : garp == "garp_master_refresh" ? "announce_refresh"
                                               : "announce_interval",
               tomlDuration(garp == "garp_interval" ? std::max<int64_t>(*v, 10) : *v));
      }
      return true;
    }
    if (garp == "garp_master_repeat") {
      if (auto v = number(c, 1, 100)) setKey(d_.announce, "announce_count", std::to_string(*v));
      return true;
    }
    return false;
  }

  void notifyKey(const KaStatement& c, std::string_view block, const std::string& key) {
    if (c.args.empty()) return error(c, c.keyword + " needs a command");
    // keepalived's quoted form is one argument holding the whole command line; the unquoted
    // form is a path and (keepalived 2) a user: the user is not carried.
    setKey(d_.notify, key, tomlString(c.args[0]));
    rec(c, block, c.keyword, c.args.size() > 1 ? "the user " + c.args[1] + " is not carried" : "");
  }

  void instance(const KaStatement& s) {
    rec(s, "vrrp_instance", "vrrp_instance");
    std::string iface;
    for (const auto& c : s.children) {
      if (c.keyword == "interface") {
        if (const std::string* a = arg(c, "an interface")) iface = *a;
      }
    }
    bool preempt = true;
    for (const auto& c : s.children) {
      const std::string& k = c.keyword;
      if (k == "interface") {
        if (!iface.empty()) addInterface(iface);
        rec(c, "vrrp_instance", k);
      } else if (k == "state") {
        if (const std::string* a = arg(c, "MASTER or BACKUP")) d_.state = *a;
        rec(c, "vrrp_instance", k);
      } else if (k == "priority") {
        if (auto v = number(c, 0, 255)) {
          if (d_.priority && *d_.priority != *v) {
            rec(c, "vrrp_instance", k,
                "instances with different priorities: tandem keeps the highest, " +
                    std::to_string(std::max<int64_t>(*d_.priority, *v)));
            d_.priority = static_cast<int>(std::max<int64_t>(*d_.priority, *v));
            continue;
          }
          d_.priority = static_cast<int>(*v);
        }
        rec(c, "vrrp_instance", k);
      } else if (k == "advert_int") {
        if (auto v = timer(c)) {
          // tandem's ranges: heartbeat_interval up to 10s, dead_time up to 60s.
          d_.advert_ms = std::clamp<int64_t>(*v, 50, 10000);
          std::string detail = "heartbeat_interval " + seconds(*d_.advert_ms) + ", dead_time " +
                               seconds(std::min<int64_t>(3 * *d_.advert_ms, 30000));
          if (*v > 10000) detail += " (tandem's longest heartbeat interval is 10s)";
          rec(c, "vrrp_instance", k, detail);
        }
      } else if (k == "nopreempt") {
        preempt = false;
        d_.failback = "manual";
        rec(c, "vrrp_instance", k);
      } else if (k == "preempt_delay") {
        if (auto v = timer(c)) {
          d_.failback_delay = *v;
          if (preempt) d_.failback = "delayed";
        }
        rec(c, "vrrp_instance", k);
      } else if (k == "virtual_ipaddress" || k == "virtual_ipaddress_excluded") {
        rec(c, "vrrp_instance", k);
        for (const auto& a : c.children) vip(a, iface, k);
      } else if (k == "notify_master") {
        notifyKey(c, "vrrp_instance", "active");
      } else if (k == "notify_backup") {
        notifyKey(c, "vrrp_instance", "backup");
      } else if (k == "notify_fault") {
        notifyKey(c, "vrrp_instance", "fault");
      } else if (k == "notify") {
        notifyKey(c, "vrrp_instance", "role");
      } else if (announce(c, k)) {
        rec(c, "vrrp_instance", k);
      } else if (k == "lvs_sync_daemon_interface") {
        if (const std::string* a = arg(c, "an interface")) {
          setKey(d_.sync, "enabled", "true");
          setKey(d_.sync, "interface", tomlString(*a));
        }
        rec(c, "vrrp_instance", k);
      } else {
        recBlock(c, "vrrp_instance");
      }
    }
    if (preempt && !d_.failback) d_.failback = "auto";
  }

  void addInterface(const std::string& iface) {
    if (std::find(d_.interfaces.begin(), d_.interfaces.end(), iface) == d_.interfaces.end()) {
      d_.interfaces.push_back(iface);
    }
  }

  // `ADDR[/LEN] [dev IF] [label L] [brd ...] [scope ...]`
  void vip(const KaStatement& a, const std::string& instance_iface, const std::string& block) {
    std::string text = a.keyword;
    std::optional<IpPrefix> prefix;
    if (text.find('/') != std::string::npos) {
      prefix = IpPrefix::parse(text);
    } else if (auto addr = IpAddress::parse(text)) {
      prefix = IpPrefix{*addr, addr->maxPrefix()};
    }
    if (!prefix) {
      return error(a, block + ": " + text + " is not an IP address (as 198.51.100.10/24)");
    }
    VipSpec v{prefix->toString(), instance_iface, ""};
    std::string ignored;
    for (size_t i = 0; i < a.args.size(); ++i) {
      if ((a.args[i] == "dev" || a.args[i] == "label") && i + 1 < a.args.size()) {
        (a.args[i] == "dev" ? v.interface : v.label) = a.args[i + 1];
        ++i;
      } else {
        ignored += (ignored.empty() ? "" : ", ") + a.args[i];
      }
    }
    if (v.interface.empty()) {
      return error(a, text + ": no interface (name one with dev, or interface in the instance)");
    }
    addInterface(v.interface);
    for (const auto& have : d_.vips) {
      if (have.address == v.address && have.interface == v.interface) {
        record(report_, K, a.file, a.line, "vrrp_instance", block,
               "already a VIP of an instance above: one [[vip]] for both");
        return;
      }
    }
    d_.vips.push_back(v);
    record(report_, K, a.file, a.line, "vrrp_instance", block,
           ignored.empty() ? "" : "not carried: " + ignored + " (the kernel's defaults apply)");
  }

  void syncGroup(const KaStatement& s) {
    for (const auto& c : s.children) {
      const std::string& k = c.keyword;
      if (k == "notify_master") {
        notifyKey(c, "vrrp_sync_group", "active");
      } else if (k == "notify_backup") {
        notifyKey(c, "vrrp_sync_group", "backup");
      } else if (k == "notify_fault") {
        notifyKey(c, "vrrp_sync_group", "fault");
      } else if (k == "notify") {
        notifyKey(c, "vrrp_sync_group", "role");
      } else {
        recBlock(c, "vrrp_sync_group");
      }
    }
  }

  void group(const KaStatement& s) {
    if (s.args.empty()) return error(s, "virtual_server_group needs a name");
    auto& members = groups_[s.args[0]];
    for (const auto& c : s.children) {
      if (c.keyword == "fwmark") {
        if (auto v = number(c, 1, 4294967295)) members.push_back({"", *v, c.file, c.line});
        rec(c, "virtual_server_group", "fwmark");
        continue;
      }
      // ADDR[-LAST] PORT, the range in the address's last part
      std::string addr = c.keyword;
      std::string port = c.args.empty() ? "0" : c.args[0];
      auto p = integer(port, 0, 65535);
      if (!p) return error(c, port + ": not a port");
      std::string first = addr;
      int64_t last = -1;
      if (auto dash = addr.rfind('-'); dash != std::string::npos) {
        first = addr.substr(0, dash);
        // the range's end is the last part of the address: decimal for IPv4, hex for IPv6
        std::string end = addr.substr(dash + 1);
        bool v6 = addr.find(':') != std::string::npos;
        const char* digits = v6 ? "0123456789abcdefABCDEF" : "0123456789";
        if (end.empty() || end.size() > (v6 ? 4u : 3u) ||
            end.find_first_not_of(digits) != std::string::npos) {
          return error(c, addr + ": not an address range (as 198.51.100.3-10)");
        }
        last = std::stoll(end, nullptr, v6 ? 16 : 10);
      }
      auto ip = IpAddress::parse(first);
      if (!ip) return error(c, first + " is not an IP address");
      if (last < 0) {
        members.push_back({hostPort(*ip, static_cast<uint16_t>(*p)), std::nullopt, c.file, c.line});
      } else {
        size_t at = ip->family == Family::kInet ? 3 : 15;
        int64_t from = ip->family == Family::kInet ? ip->bytes[3] : ip->bytes[15];
        if (ip->family == Family::kInet6) {
          from = (ip->bytes[14] << 8) | ip->bytes[15];
        }
        if (last < from || last - from >= kMaxRange ||
            (ip->family == Family::kInet && last > 255)) {
          return error(c, addr + ": a range of at most " + std::to_string(kMaxRange) +
                              " addresses, upwards within the last part");
        }
        for (int64_t v = from; v <= last; ++v) {
          IpAddress a = *ip;
          if (ip->family == Family::kInet) {
            a.bytes[at] = static_cast<uint8_t>(v);
          } else {
            a.bytes[14] = static_cast<uint8_t>(v >> 8);
            a.bytes[15] = static_cast<uint8_t>(v & 0xff);
          }
          members.push_back({hostPort(a, static_cast<uint16_t>(*p)), std::nullopt, c.file, c.line});
        }
      }
      rec(c, "virtual_server_group", "member");
    }
  }

  // The timing keywords a virtual server, real server and checker share.
  bool timing(const KaStatement& c, Timing& t, std::string_view block) {
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

  static void merge(Timing& into, const Timing& over) {
    if (over.delay_loop) into.delay_loop = over.delay_loop;
    if (over.connect_timeout) into.connect_timeout = over.connect_timeout;
    if (over.delay_before_retry) into.delay_before_retry = over.delay_before_retry;
    if (over.retry) into.retry = over.retry;
    if (over.alpha) into.alpha = over.alpha;
    if (over.virtualhost) into.virtualhost = over.virtualhost;
  }

  std::optional<std::string> forwarding(const KaStatement& c) {
    const std::string* a = arg(c, "NAT, DR or TUN");
    if (a == nullptr) return std::nullopt;
    std::string f = lower(*a);
    if (f == "nat" || f == "dr" || f == "tun") return f;
    error(c, c.keyword + " " + *a + ": not NAT, DR or TUN");
    return std::nullopt;
  }

  void virtualServer(const KaStatement& s) {
    std::vector<ServiceSpec> expanded;
    if (s.args.size() >= 2 && s.args[0] == "group") {
      auto it = groups_.find(s.args[1]);
      if (it == groups_.end()) {
        return error(s, "virtual_server group " + s.args[1] +
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
      if (!v) return error(s, "fwmark " + s.args[1] + ": not a mark from 1 to 4294967295");
      ServiceSpec spec{s.file, s.line, "", *v, {}, false, {}};
      expanded.push_back(spec);
      rec(s, "virtual_server", "virtual_server");
    } else if (s.args.size() >= 1) {
      auto ip = IpAddress::parse(s.args[0]);
      if (!ip) return error(s, "virtual_server " + s.args[0] + ": not an IP address");
      auto port = s.args.size() >= 2 ? integer(s.args[1], 0, 65535) : std::optional<int64_t>(0);
      if (!port) return error(s, "virtual_server " + s.args[1] + ": not a port");
      ServiceSpec spec{
          s.file, s.line, hostPort(*ip, static_cast<uint16_t>(*port)), std::nullopt, {}, false, {}};
      expanded.push_back(spec);
      rec(s, "virtual_server", "virtual_server");
    } else {
      return error(s, "virtual_server needs IP PORT, fwmark N or group NAME");
    }

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

  std::optional<RealSpec> realServer(const KaStatement& r, const Timing& vs_timing, bool& inhibit) {
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

  CheckSpec check(const KaStatement& c, Timing t) {
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
    std::string detail = "tandem takes a failed real server out after " +
                         std::to_string(spec.fall) + " failed check" + (spec.fall == 1 ? "" : "s") +
                         " " + seconds(spec.interval) + " apart: within " +
                         seconds(spec.fall * spec.interval) + " of a refusal (keepalived: within " +
                         seconds(delay_loop + static_cast<int64_t>(retry) * dbr) + ")";
    if (timeout > spec.interval) {
      detail += "; the timeout " + seconds(timeout) + " is cut to the interval";
    }
    rec(c, "real_server", kind, detail);
    return spec;
  }

  void url(const KaStatement& u, CheckSpec& spec) {
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

  // UDP_CHECK's hex strings: carried when they decode to printable text.
  void udpHex(const KaStatement& o, CheckSpec& spec) {
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

  Report& report_;
  std::vector<ImportError>& errors_;
  Director d_;
  std::map<std::string, std::vector<GroupMember>> groups_;
  std::vector<std::string> flags_;
};

// A valid node name from router_id: letters, digits, - and _, else the fallback.
std::string nodeName(const std::string& router_id, const std::string& fallback) {
  if (router_id.empty() || router_id.size() > 63) return fallback;
  for (char c : router_id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return fallback;
    }
  }
  return router_id;
}

void writeCheck(ConfTable& t, const CheckSpec& c) {
  t.set("type", tomlString(c.type));
  t.set("interval", tomlDuration(c.interval));
  t.set("timeout", tomlDuration(c.timeout));
  t.set("rise", "1", "keepalived puts a real server back after one good check");
  t.set("fall", std::to_string(c.fall), "keepalived's retry + 1");
  if (c.alpha) t.set("initial", tomlString("down"), "alpha");
  for (const auto& [k, v] : c.keys) t.set(k, v);
}

void writeServices(ConfDraft& draft, const Director& d) {
  for (const auto& s : d.services) {
    ConfTable& t =
        draft.add("[[virtual_server]]", {"from " + s.file + ":" + std::to_string(s.line)});
    if (!s.address.empty()) {
      t.set("address", tomlString(s.address));
    } else {
      t.set("fwmark", std::to_string(*s.fwmark));
    }
    for (const auto& [k, v] : s.keys) t.set(k, v);
    // One check for the whole service when every real server has the same; otherwise each its
    // own.
    bool same = !s.reals.empty() && s.reals[0].check &&
                std::all_of(s.reals.begin(), s.reals.end(),
                            [&](const RealSpec& r) { return r.check == s.reals[0].check; });
    if (same) writeCheck(draft.add("[virtual_server.check]"), *s.reals[0].check);
    for (const auto& r : s.reals) {
      ConfTable& rt = draft.add("[[virtual_server.real_server]]");
      rt.set("address", tomlString(r.address));
      for (const auto& [k, v] : r.keys) rt.set(k, v);
      if (!same && r.check) writeCheck(draft.add("[virtual_server.real_server.check]"), *r.check);
    }
  }
}

// Everything of d that both directors share, rendered, for comparing two files.
std::vector<std::string> sharedLines(const Director& d) {
  ConfDraft draft;
  ConfTable& t = draft.add("[cluster]");
  t.set("failback", d.failback.value_or(""));
  t.set("failback_delay", std::to_string(d.failback_delay.value_or(0)));
  t.set("advert", std::to_string(d.advert_ms.value_or(0)));
  for (const auto& v : d.vips)
    draft.add("[[vip]]")
        .set("address", v.address)
        .set("interface", v.interface)
        .set("label", v.label);
  ConfTable& n = draft.add("[notify]");
  for (const auto& [k, v] : d.notify) n.set(k, v);
  ConfTable& sy = draft.add("[sync]");
  for (const auto& [k, v] : d.sync) sy.set(k, v);
  ConfTable& ip = draft.add("[ipvs]");
  for (const auto& [k, v] : d.ipvs) ip.set(k, v);
  ConfTable& an = draft.add("[announce]");
  for (const auto& [k, v] : d.announce) an.set(k, v);
  writeServices(draft, d);
  std::vector<std::string> lines;
  std::string header;
  for (const auto& tb : draft.tables()) {
    if (!tb.header.empty()) header = tb.header;
    for (const auto& e : tb.entries) lines.push_back(header + " " + e.key + " = " + e.value);
  }
  return lines;
}

void compareDirectors(const Director& a, const Director& b, Report& report) {
  std::vector<std::string> la = sharedLines(a), lb = sharedLines(b);
  size_t shown = 0;
  size_t n = std::max(la.size(), lb.size());
  for (size_t i = 0; i < n && shown < 50; ++i) {
    std::string x = i < la.size() ? la[i] : "(nothing)";
    std::string y = i < lb.size() ? lb[i] : "(nothing)";
    if (x != y) {
      report.note("the two files differ: " + a.file + " has `" + x + "`, " + b.file + " has `" + y +
                  "`; the import takes " + a.file + "'s");
      ++shown;
    }
  }
  if (shown == 50) report.note("(more differences not listed)");
}

std::string render(const std::vector<Director>& ds, const ImportOptions& options,
                   const std::vector<std::string>& files) {
  const Director& d = ds[0];
  ConfDraft draft;
  std::string sources;
  for (const auto& f : files) sources += (sources.empty() ? "" : " and ") + f;
  draft.header({"tandem.conf imported from keepalived's " + sources + " by `tandem config import`.",
                "Read the import's report (stderr) for what was dropped and what behaves",
                "differently; check it with `tandem config verify` before use."});
  ConfTable& c = draft.add("[cluster]");
  c.set("name", tomlString("keepalived"), "a name for logs and tandem's output");
  if (d.advert_ms) {
    c.set("heartbeat_interval", tomlDuration(*d.advert_ms), "advert_int");
    c.set("dead_time", tomlDuration(std::min<int64_t>(3 * *d.advert_ms, 30000)), "3 × advert_int");
  }
  std::string failback = d.failback.value_or("auto");
  c.set("failback", tomlString(failback),
        failback == "manual"    ? "nopreempt"
        : failback == "delayed" ? "preempt_delay"
                                : "keepalived preempts by default");
  if (failback == "delayed") c.set("failback_delay", tomlDuration(d.failback_delay.value_or(0)));
  draft
      .add("[[cluster.key]]",
           {"The key that signs every heartbeat: `tandem keygen` writes it; copy it to",
            "each director with its mode (0600)."})
      .set("id", "1")
      .set("file", tomlString(options.key_file));
  for (size_t i = 0; i < 2; ++i) {
    const Director* nd = i < ds.size() ? &ds[i] : nullptr;
    std::string fallback = "director" + std::to_string(i + 1);
    std::vector<std::string> comments;
    if (nd == nullptr) {
      comments = {"The second director: a guess from the first. Import both directors' files to",
                  "fill it in, or set its name and priority here."};
    } else {
      comments = {"From " + nd->file + (nd->state.empty() ? "" : " (state " + nd->state + ")") +
                  ". The name must be the director's host name, as corosync.conf names it."};
    }
    ConfTable& n = draft.add("[[node]]", comments);
    std::string name = nd ? nodeName(nd->name, fallback) : fallback;
    if (i == 1 && ds.size() > 1 && name == nodeName(ds[0].name, "director1")) name = fallback;
    n.set("name", tomlString(name));
    int prio = nd && nd->priority
                   ? *nd->priority
                   : (d.priority.value_or(100) > 1 ? d.priority.value_or(100) - 1 : 0);
    n.set("priority", std::to_string(std::clamp(prio, 0, 255)));
    n.set("interfaces", tomlStrings(nd ? nd->interfaces : d.interfaces));
  }
  for (const auto& v : d.vips) {
    ConfTable& t = draft.add("[[vip]]");
    t.set("address", tomlString(v.address));
    t.set("interface", tomlString(v.interface));
    if (!v.label.empty()) t.set("label", tomlString(v.label));
    for (const auto& [k, val] : d.announce) t.set(k, val);
  }
  if (!d.notify.empty()) {
    ConfTable& t = draft.add(
        "[notify]", {"keepalived's notify scripts. tandem gives the event in the environment",
                     "(TANDEM_ROLE, ...), not as arguments: see tandem.conf(5)."});
    for (const auto& [k, v] : d.notify) t.set(k, v);
  }
  if (!d.sync.empty()) {
    ConfTable& t = draft.add("[sync]");
    for (const auto& [k, v] : d.sync) t.set(k, v);
  }
  if (!d.ipvs.empty()) {
    ConfTable& t = draft.add("[ipvs]");
    for (const auto& [k, v] : d.ipvs) t.set(k, v);
  }
  writeServices(draft, d);
  return draft.render();
}

}  // namespace

ImportResult importKeepalived(const std::vector<std::string>& files, const SourceReader& reader,
                              const ImportOptions& options) {
  ImportResult result;
  if (files.empty() || files.size() > 2) {
    result.errors.push_back({"", 0, "import takes one keepalived.conf, or one per director (two)"});
    return result;
  }
  std::vector<Director> directors;
  for (const auto& f : files) {
    KaParse parse = parseKeepalived(f, reader, options.config_id);
    if (!parse.errors.empty()) {
      result.errors = std::move(parse.errors);
      return result;
    }
    // The second file's lines are reported too, so that each is accounted for.
    Importer importer(result.report, result.errors);
    Director d = importer.run(parse);
    d.file = f;
    if (!result.errors.empty()) return result;
    directors.push_back(std::move(d));
  }
  if (directors.size() == 2) compareDirectors(directors[0], directors[1], result.report);
  const Director& d = directors[0];
  if (d.vips.empty()) {
    result.report.note(
        "no VIPs: tandem will only program the IPVS table; add [[vip]] tables for "
        "the addresses the ACTIVE should hold");
  }
  if (directors.size() == 1) {
    result.report.note(
        "one director's file: the second [[node]] is a guess; import both files "
        "(`tandem config import --from keepalived A B`) to fill it in");
  }
  result.report.note(
      "the directors need a Corosync cluster: corosync.conf with both nodes, "
      "named as their [[node]] entries");
  result.report.note("write the key with `tandem keygen " + options.key_file +
                     "` beside the config, and copy it to the other director");
  result.conf = render(directors, options, files);
  return result;
}

}  // namespace tandem::importer
