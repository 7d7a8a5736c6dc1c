#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "common/duration.h"

// Route health injection's decision, per virtual service: should this director hold the
// service's host route now, and why (or why not). Pure: the shell hands in the time, the
// director's entitlement and the service's health, and arms a timer for the deadline returned.
//
// Dampening: a held route is withdrawn at the first sign of trouble (the service unhealthy,
// the director no longer entitled). Once a service has been withdrawn for being unhealthy, it
// is injected again only after it has stayed healthy for the whole hold-down; a flap inside
// the hold-down starts it again. So a service that flaps faster than the hold-down is withdrawn
// once, not on every flap, as BGP route dampening would have it, but decided here, before any
// router sees a change. A withdrawal for entitlement (a role change, a stop) is no flap: the
// route comes back as soon as the director is entitled again.
namespace tandem::resources::route {

using Time = std::chrono::steady_clock::time_point;

// What the director allows, whatever the service's health.
enum class Entitlement {
  kEntitled,   // active/backup: ACTIVE; active/active: any role but the ones below
  kNoRoleYet,  // joining the cluster: no role elected yet
  kNotActive,  // active/backup, and this director is not the ACTIVE
  kStandby,    // put aside by the operator
  kFault,      // not fit to serve (quorum, tiebreaker, a resource failure)
  kStopping,   // tandemd stops
};
const char* entitlementName(Entitlement e);

struct ServiceHealth {
  size_t up = 0;           // real servers up (unchecked ones count as up)
  size_t total = 0;        // real servers configured
  size_t min_healthy = 1;  // the route needs at least this many up
  bool healthy() const { return up >= min_healthy && up > 0; }
};

struct RouteDecision {
  bool hold = false;
  std::string reason;           // "healthy: 2 of 2 real servers up", "hold-down: ..."
  std::optional<Time> recheck;  // ask again at this time (the hold-down's end)
};

class RoutePolicy {
 public:
  explicit RoutePolicy(Millis hold_down) : hold_down_(hold_down) {}

  // The decision now. Call it on every change of entitlement or health and at the recheck time;
  // calling it again with nothing changed decides the same.
  RouteDecision decide(Time now, Entitlement entitlement, const ServiceHealth& health);

  // A reload changed the hold-down: a running hold keeps its start, with the new length.
  void setHoldDown(Millis hold_down) { hold_down_ = hold_down; }

  // Withdrawals for unhealthiness since the start, and flaps absorbed by the hold-down (a
  // failure seen while already held down).
  uint64_t withdrawals() const { return withdrawals_; }
  uint64_t absorbedFlaps() const { return absorbed_; }

 private:
  Millis hold_down_;
  bool held_ = false;                  // what the last decision said
  bool was_healthy_ = false;           // the health at the last decision
  bool damped_ = false;                // withdrawn for health, waiting out the hold-down
  std::optional<Time> healthy_since_;  // while damped: when the current healthy stretch began
  uint64_t withdrawals_ = 0;
  uint64_t absorbed_ = 0;
};

}  // namespace tandem::resources::route
