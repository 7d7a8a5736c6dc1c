#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/duration.h"
#include "config/config.h"
#include "ipvs/ipvs_model.h"

// The ipvs answer of protocol.h from a dumped table and the running config. Pure.
namespace tandem::resources::ipvs {

struct IpvsView {
  bool in_sync = false;
  Millis monitor_interval{0};
};

// Each service with its destinations and counters, in the table's order. What tandem knows
// comes from cfg: a service's name and whether it is managed, each real server's health ("up"
// when it has no check, "unknown" while checks do not run, "fallback" for the sorry server).
nlohmann::json ipvsJson(const Table& table, const config::Config& cfg, const IpvsView& view);

}  // namespace tandem::resources::ipvs
