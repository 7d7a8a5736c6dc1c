#include "ipvs/ipvs_json.h"

#include <linux/ip_vs.h>
#include <netinet/in.h>

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "ipvs/ipvs_desired.h"
#include "ipvs/reconciler.h"

namespace tandem::resources::ipvs {

namespace {

using nlohmann::json;
using resources::ipvs::DestKey;
using resources::ipvs::ServiceKey;
using resources::ipvs::Stats;

json protocolOf(const ServiceKey& key) {
  if (key.fwmark != 0) return nullptr;
  return resources::ipvs::protocolName(key.protocol);
}

json flagNames(const resources::ipvs::Service& s) {
  json out = json::array();
  if (s.flags & IP_VS_SVC_F_PERSISTENT) out.push_back("persistent");
  if (s.flags & IP_VS_SVC_F_ONEPACKET) out.push_back("one-packet");
  // The scheduler flags mean something only to sh and mh (their "fallback" and "port").
  const bool hashing = s.scheduler == "sh" || s.scheduler == "mh";
  if (s.flags & IP_VS_SVC_F_SCHED1) out.push_back(hashing ? "fallback" : "sched-flag-1");
  if (s.flags & IP_VS_SVC_F_SCHED2) out.push_back(hashing ? "port" : "sched-flag-2");
  if (s.flags & IP_VS_SVC_F_SCHED3) out.push_back("sched-flag-3");
  return out;
}

void addStats(json& j, const Stats& s) {
  j["conns"] = s.conns;
  j["cps"] = s.cps;
  j["in_pps"] = s.in_pps;
  j["out_pps"] = s.out_pps;
  j["in_bps"] = s.in_bps;
  j["out_bps"] = s.out_bps;
}

// What tandem knows of one configured service: its name and its destinations' health.
struct Known {
  std::string name;
  std::map<DestKey, std::string> health;
};

std::map<ServiceKey, Known> knownServices(const config::Config& cfg, const HealthReports* health) {
  std::map<ServiceKey, Known> out;
  for (const auto& vs : cfg.virtual_servers) {
    ServiceKey key = resources::ipvs::desiredService(vs).key;
    if (out.count(key) != 0) continue;  // the first of two with one key wins, as in the table
    Known k{vs.name, {}};
    if (vs.fallback) k.health[DestKey{vs.fallback->address, vs.fallback->port}] = "fallback";
    // A server with no check is up by definition; one with a check as it last changed.
    for (const auto& rs : vs.real_servers) {
      const char* state = "up";
      if (rs.check.type != config::CheckType::kNone && health != nullptr) {
        auto h = health->find({vs.name, rs.address});
        if (h != health->end() && !h->second.up) state = "down";
      }
      k.health[DestKey{rs.address.address, rs.address.port}] = state;
    }
    out.emplace(key, std::move(k));
  }
  return out;
}

}  // namespace

json ipvsJson(const resources::ipvs::Table& table, const config::Config& cfg,
              const IpvsView& view) {
  const auto known = knownServices(cfg, view.health);
  json services = json::array();
  for (const auto& st : table.services) {
    const auto& svc = st.service;
    auto k = known.find(svc.key);
    json s;
    s["name"] = k != known.end() ? json(k->second.name) : json(nullptr);
    s["key"] = resources::ipvs::serviceName(svc.key);
    s["protocol"] = protocolOf(svc.key);
    s["address"] = svc.key.fwmark == 0 ? json(svc.key.address.toString()) : json(nullptr);
    s["port"] = svc.key.port;
    s["fwmark"] = svc.key.fwmark != 0 ? json(svc.key.fwmark) : json(nullptr);
    s["family"] = svc.key.family == Family::kInet6 ? "ipv6" : "ipv4";
    s["scheduler"] = svc.scheduler;
    s["flags"] = flagNames(svc);
    s["persistence_timeout_s"] = (svc.flags & IP_VS_SVC_F_PERSISTENT) ? svc.timeout_s : 0;
    s["managed"] = k != known.end();
    addStats(s, st.stats);
    json dests = json::array();
    for (const auto& ds : st.destinations) {
      const auto& d = ds.dest;
      json j;
      j["address"] = d.key.address.toString();
      j["port"] = d.key.port;
      j["forward"] = resources::ipvs::forwardName(d.forward);
      j["weight"] = d.weight;
      j["upper_threshold"] = d.upper_threshold;
      j["lower_threshold"] = d.lower_threshold;
      json health = nullptr;
      if (k != known.end()) {
        auto h = k->second.health.find(d.key);
        if (h != k->second.health.end()) health = h->second;
      }
      j["health"] = std::move(health);
      j["drained"] = view.drained != nullptr && view.drained->count({svc.key, d.key}) != 0;
      j["active_conns"] = ds.active_conns;
      j["inactive_conns"] = ds.inactive_conns;
      j["persistent_conns"] = ds.persistent_conns;
      addStats(j, ds.stats);
      dests.push_back(std::move(j));
    }
    s["destinations"] = std::move(dests);
    services.push_back(std::move(s));
  }
  return json{{"in_sync", view.in_sync},
              {"monitor_interval_ms", static_cast<uint64_t>(view.monitor_interval.count())},
              {"services", std::move(services)}};
}

}  // namespace tandem::resources::ipvs
