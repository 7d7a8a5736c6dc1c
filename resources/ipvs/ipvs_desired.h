#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "common/ip_address.h"
#include "config/config.h"
#include "ipvs/ipvs_model.h"

// What the kernel's IPVS table should hold: the configured virtual servers, with each real
// server's weight decided by its health. Pure: config and health in, a Table out.
namespace tandem::resources::ipvs {

// The health of each real server, by its virtual server's name and its address (as resolved by
// the config loader). A server nobody has reported on is up: until checks run, every configured
// server takes traffic.
// A real server's health as its check decided: up or down, and the weight it has while up when
// that is not the configured one (an exec check's exit status, a slow start's ramp).
struct RealHealth {
  bool up = true;
  std::optional<int> weight;  // unset: the configured weight
  bool operator==(const RealHealth&) const = default;
};

class Health {
 public:
  void set(std::string_view virtual_server, const Endpoint& real_server, bool up,
           std::optional<int> weight = std::nullopt);
  bool up(std::string_view virtual_server, const Endpoint& real_server) const;
  RealHealth get(std::string_view virtual_server, const Endpoint& real_server) const;
  // Forgets every report: all servers are up again. The drains stay.
  void clear() { state_.clear(); }
  // The drained real servers (`tandem real drain`), by service key: weight 0 whatever their
  // health, and not counted as up for the fallback.
  void setDrained(std::set<std::pair<ServiceKey, DestKey>> drained) {
    drained_ = std::move(drained);
  }
  bool drained(const ServiceKey& service, const DestKey& dest) const {
    return drained_.count({service, dest}) != 0;
  }
  bool operator==(const Health&) const = default;

 private:
  std::map<std::pair<std::string, Endpoint>, RealHealth> state_;
  std::set<std::pair<ServiceKey, DestKey>> drained_;
};

// The IPVS table for cfg.virtual_servers given health. Rules:
//  - an up real server gets its configured weight, or the one its health says;
//  - a down real server gets weight 0 when its service is on_failure = "quiescent" (existing
//    connections finish, no new ones), or is left out when it is "remove";
//  - a drained real server gets weight 0, whatever its health: its connections finish, no new
//    ones come (checks cannot raise it);
//  - when no real server is up (a drained one does not count) and the service has a fallback,
//    the fallback is a destination with weight 1 (beside the quiescent ones), unless it is
//    itself a drained real server;
//  - two virtual servers with one key, or two real servers with one address, keep the first.
Table desiredTable(const config::Config& cfg, const Health& health);

// table was desiredTable(cfg, health) before the health of some of virtual server vs_name's real
// servers changed; health is the new one. Rebuilds only that service (the health path: one
// change costs one service's destinations, not the whole table's). True when it changed; false
// too for a name with no service in the table (none such, or a second server of one key).
bool updateDesired(Table& table, const config::Config& cfg, const Health& health,
                   std::string_view vs_name);

// One virtual server as an IPVS service (no destinations).
Service desiredService(const config::VirtualServer& vs);

// The kernel's global timeouts [ipvs] asks for, in whole seconds (rounded up); 0 leaves the
// kernel's value.
Timeouts desiredTimeouts(const config::Ipvs& ipvs);

}  // namespace tandem::resources::ipvs
