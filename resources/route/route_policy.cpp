#include "route/route_policy.h"

namespace tandem::resources::route {

const char* entitlementName(Entitlement e) {
  switch (e) {
    case Entitlement::kEntitled:
      return "entitled";
    case Entitlement::kNoRoleYet:
      return "no role yet (joining the cluster)";
    case Entitlement::kNotActive:
      return "not the ACTIVE (active/backup)";
    case Entitlement::kStandby:
      return "standby";
    case Entitlement::kFault:
      return "FAULT";
    case Entitlement::kStopping:
      return "tandemd stops";
  }
  return "?";
}

namespace {

std::string upOf(const ServiceHealth& h) {
  return std::to_string(h.up) + " of " + std::to_string(h.total) + " real servers up";
}

std::string seconds(Millis d) { return formatDuration(d); }

}  // namespace

RouteDecision RoutePolicy::decide(Time now, Entitlement entitlement, const ServiceHealth& health) {
  const bool healthy = health.healthy();
  if (hold_down_ > Millis(0)) {
    if (was_healthy_ && !healthy) {
      // A failure: the route (if held) goes now, and comes back only after a whole hold-down
      // of health. One seen while already held down is a flap the hold-down absorbs.
      if (damped_) ++absorbed_;
      damped_ = true;
      healthy_since_.reset();
    }
    if (damped_ && healthy) {
      if (!healthy_since_) healthy_since_ = now;
      if (now - *healthy_since_ >= hold_down_) {
        damped_ = false;
        healthy_since_.reset();
      }
    }
  } else {
    damped_ = false;
    healthy_since_.reset();
  }
  if (was_healthy_ && !healthy && held_) ++withdrawals_;
  was_healthy_ = healthy;

  RouteDecision d;
  d.hold = entitlement == Entitlement::kEntitled && healthy && !damped_;
  if (!healthy) {
    d.reason = "unhealthy: " + upOf(health) + ", min_healthy " + std::to_string(health.min_healthy);
  } else if (damped_) {
    const Millis so_far =
        healthy_since_ ? std::chrono::duration_cast<Millis>(now - *healthy_since_) : Millis(0);
    d.reason = "hold-down: healthy for " + seconds(so_far) + " of " + seconds(hold_down_) +
               " since its last failure";
    if (absorbed_ > 0) d.reason += " (" + std::to_string(absorbed_) + " flaps absorbed so far)";
    if (healthy_since_) d.recheck = *healthy_since_ + hold_down_;
  } else if (entitlement != Entitlement::kEntitled) {
    d.reason = std::string("healthy (") + upOf(health) + "), but " + entitlementName(entitlement);
  } else {
    d.reason = "healthy: " + upOf(health);
  }
  // Entitlement first in the reason when it alone withholds a healthy route; otherwise the
  // health is what an operator must look at first.
  if (!d.hold && entitlement != Entitlement::kEntitled && (!healthy || damped_)) {
    d.reason += "; and " + std::string(entitlementName(entitlement));
  }
  held_ = d.hold;
  return d;
}

}  // namespace tandem::resources::route
