#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "common/duration.h"
#include "config/config.h"
#include "ipvs/ipvs_desired.h"
#include "ipvs/ipvs_model.h"

// The ipvs answer of protocol.h from a dumped table and the running config. Pure.
namespace tandem::resources::ipvs {

// What the health checks reported, by (virtual server name, real server as configured).
using HealthReports = std::map<std::pair<std::string, Endpoint>, RealHealth>;

struct IpvsView {
  bool in_sync = false;
  Millis monitor_interval{0};
  const HealthReports* health = nullptr;
  // The drained real servers (`tandem real drain`); null: none.
  const std::set<std::pair<ServiceKey, DestKey>>* drained = nullptr;
};

// Each service with its destinations and counters, in the table's order. What tandem knows
// comes from cfg and the view: a service's name and whether it is managed, each real server's
// health ("up" or "down" as its check last decided, "up" without a check or before its first
// change, "fallback" for the sorry server).
nlohmann::json ipvsJson(const Table& table, const config::Config& cfg, const IpvsView& view);

}  // namespace tandem::resources::ipvs
