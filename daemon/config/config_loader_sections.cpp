// The config loader: [sync], [ipvs], [control], [metrics], [daemon] and [notify]
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

void Loader::readSync(TableReader r, Sync& s) {
  if (auto b = r.boolean("enabled")) s.enabled = *b;
  if (auto v = r.string("interface")) {
    s.interface = *v;
    if (auto why = interfaceNameProblem(*v)) {
      r.badValue("interface", *why, "name the link the directors share as `ip link` shows it");
    }
  }
  if (s.enabled && s.interface.empty()) {
    error(r.where(),
          "[sync] is enabled without an interface; add interface = \"eth1\" "
          "(the link the directors share for connection sync)");
  }
  if (auto v = r.integer("sync_id", 0, 255)) s.sync_id = static_cast<int>(*v);
  if (auto a = r.address("multicast_group")) {
    if (!a->isMulticast()) {
      r.badValue("multicast_group", a->toString() + " is not a multicast address",
                 "use one in 224.0.0.0/4 or ff00::/8, e.g. \"224.0.0.81\"");
    } else {
      s.multicast_group = *a;
    }
  }
  if (auto v = r.integer("port", 1, 65535)) s.port = static_cast<uint16_t>(*v);
  if (auto v = r.integer("ttl", 1, 255)) s.ttl = static_cast<int>(*v);
  if (auto v = r.integer("max_message_length", 128, 65507)) {
    s.max_message_length = static_cast<int>(*v);
  }
  if (auto d = r.duration("sync_settle", 0ms, 1h)) s.settle = *d;
  if (auto v = r.fraction("sync_min_share")) s.min_share = *v;
  if (auto d = r.duration("sync_max_wait", 0ms, 24h)) s.max_wait = *d;
  r.finish();
}

void Loader::readIpvs(TableReader r, Ipvs& i) {
  if (auto m = r.choice<IpvsManage>("manage",
                                    {{"owned", IpvsManage::kOwned}, {"all", IpvsManage::kAll}})) {
    i.manage = *m;
  }
  if (auto d = r.duration("monitor_interval", 100ms, 1h)) i.monitor_interval = *d;
  if (auto d = r.duration("tcp_timeout", 0ms, kForever)) i.tcp_timeout = *d;
  if (auto d = r.duration("tcpfin_timeout", 0ms, kForever)) i.tcpfin_timeout = *d;
  if (auto d = r.duration("udp_timeout", 0ms, kForever)) i.udp_timeout = *d;
  for (const char* k : {"tcp_timeout", "tcpfin_timeout", "udp_timeout"}) {
    const Millis& v = std::string_view(k) == "tcp_timeout"      ? i.tcp_timeout
                      : std::string_view(k) == "tcpfin_timeout" ? i.tcpfin_timeout
                                                                : i.udp_timeout;
    if (v.count() % 1000 != 0) {
      r.badValue(k, "IPVS keeps its timeouts in whole seconds",
                 "write a whole number of seconds, e.g. \"900s\" or \"15m\"");
    }
  }
  if (auto b = r.boolean("set_sysctls")) i.set_sysctls = *b;
  r.finish();
}

void Loader::readControl(TableReader r, Control& c) {
  if (auto v = r.string("group")) {
    if (v->empty())
      r.badValue("group", "the group is empty", "name a unix group, e.g. \"root\"");
    else
      c.group = *v;
  }
  if (auto v = r.string("ipc_name")) {
    bool ok = !v->empty() && v->size() <= 64 && std::all_of(v->begin(), v->end(), [](char ch) {
      return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '-' || ch == '_' || ch == '.';
    });
    if (!ok) {
      r.badValue("ipc_name", "\"" + *v + "\" is not a usable IPC name",
                 "use 1 to 64 letters, digits, '-', '_' or '.'");
    } else {
      c.ipc_name = *v;
    }
  }
  r.finish();
}

void Loader::readMetrics(TableReader r, Metrics& m) {
  if (auto v = r.boolean("enabled")) m.enabled = *v;
  if (auto v = r.string("listen")) {
    if (auto e = Endpoint::parse(*v, false)) {
      m.listen = *e;
    } else {
      r.badValue("listen", endpointProblem(*v, false),
                 "use ADDRESS:PORT, e.g. \"127.0.0.1:9474\" or \"[::1]:9474\"");
    }
  }
  r.finish();
}

void Loader::readDaemon(TableReader r, Daemon& d) {
  if (auto v = r.string("state_dir")) {
    if (v->empty() || v->front() != '/') {
      r.badValue("state_dir", "\"" + *v + "\" is not an absolute path",
                 "use an absolute directory, e.g. \"/var/lib/tandem\"");
    } else {
      d.state_dir = *v;
    }
  }
  if (auto v = r.string("log_level")) {
    if (std::find(kLogLevels.begin(), kLogLevels.end(), *v) == kLogLevels.end()) {
      r.badValue("log_level", "\"" + *v + "\" is not a log level",
                 "use one of " + quotedAlternatives(kLogLevels));
    } else {
      d.log_level = *v;
    }
  }
  r.finish();
}

void Loader::readNotify(TableReader r, Notify& n) {
  for (auto [key, field] :
       {std::pair{"role", &n.role}, std::pair{"active", &n.active}, std::pair{"backup", &n.backup},
        std::pair{"fault", &n.fault}, std::pair{"vip", &n.vip}}) {
    *field = readCommand(r, key);
    if (!*field) continue;
    if (auto why = programProblem(**field, files_)) {
      error(r.where(key), "notify." + std::string(key) + " " + *why);
      field->reset();
    }
  }
  if (auto d = r.duration("timeout", 100ms, 10min)) n.timeout = *d;
  r.finish([](const std::string& key) -> std::string {
    // keepalived's names for them.
    static const std::map<std::string, std::string> keepalived = {{"notify_master", "active"},
                                                                  {"notify_backup", "backup"},
                                                                  {"notify_fault", "fault"},
                                                                  {"notify", "role"}};
    auto it = keepalived.find(key);
    if (it == keepalived.end()) return {};
    return "unknown key \"" + key + "\" in [notify]; keepalived's " + key + " is notify." +
           it->second + " here";
  });
}

}  // namespace tandem::config::loading
