// keepalived.conf -> tandem.conf. The parser gives a statement tree; this walks it once,
// reporting every line through the mapping table, and collects what it finds into a small model
// of the result (one director's worth per file), which is then written out as TOML. With two
// files, the second gives the second [[node]], and every other difference is reported.
#include "keepalived_importer.h"

namespace tandem::importer {

namespace keepalived_import {

void Importer::top(const KaStatement& s) {
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

void Importer::globalDef(const KaStatement& c) {
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

bool Importer::announce(const KaStatement& c, const std::string& garp) {
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

void Importer::notifyKey(const KaStatement& c, std::string_view block, const std::string& key) {
  if (c.args.empty()) return error(c, c.keyword + " needs a command");
  // keepalived's quoted form is one argument holding the whole command line; the unquoted
  // form is a path and (keepalived 2) a user: the user is not carried.
  setKey(d_.notify, key, tomlString(c.args[0]));
  rec(c, block, c.keyword, c.args.size() > 1 ? "the user " + c.args[1] + " is not carried" : "");
}

void Importer::instance(const KaStatement& s) {
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

void Importer::addInterface(const std::string& iface) {
  if (std::find(d_.interfaces.begin(), d_.interfaces.end(), iface) == d_.interfaces.end()) {
    d_.interfaces.push_back(iface);
  }
}

void Importer::vip(const KaStatement& a, const std::string& instance_iface,
                   const std::string& block) {
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

void Importer::syncGroup(const KaStatement& s) {
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

void Importer::group(const KaStatement& s) {
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
      if (last < from || last - from >= kMaxRange || (ip->family == Family::kInet && last > 255)) {
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

}  // namespace keepalived_import

using keepalived_import::Director;
using keepalived_import::Importer;

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
  if (directors.size() == 2)
    keepalived_import::compareDirectors(directors[0], directors[1], result.report);
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
  result.conf = keepalived_import::render(directors, options, files);
  return result;
}

}  // namespace tandem::importer
