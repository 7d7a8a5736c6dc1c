#pragma once

#include <chrono>
#include <optional>

#include "common/duration.h"
#include "election/peer_state.h"

// The election core's arithmetic on its clock, shared by cluster_core.cpp (events) and
// cluster_core_views.cpp (what it says of itself). Internal to daemon/election.
namespace tandem::election {

inline int64_t msBetween(Time a, Time b) {
  return std::chrono::duration_cast<Millis>(b - a).count();
}

// How long a condition has held (0 when it does not).
inline Millis steadyFor(const std::optional<Time>& since, Time now) {
  return since ? Millis(msBetween(*since, now)) : Millis(0);
}

}  // namespace tandem::election
