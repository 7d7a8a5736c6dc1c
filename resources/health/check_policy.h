#pragma once

#include <cstdint>
#include <string_view>

#include "common/duration.h"
#include "config/config.h"

// The one policy every check type shares, pure: rise and fall counting, the initial state, the
// windows an operator can rely on, and the spread of first checks.
namespace tandem::resources::health {

// A real server's health as its check results say, counted in a row. Starts from the check's
// `initial`: up (goes down after `fall` failures), down (one success puts it up), or down until
// it rises (`rise` successes). After that, `fall` failures in a row take an up server down and
// `rise` successes in a row bring a down one back; a result that agrees with the state resets
// the count against it, so a server that flaps faster than that stays where it is.
class RiseFall {
 public:
  RiseFall(int rise, int fall, config::InitialHealth initial);

  // Records one result; true when it changed the state.
  bool record(bool ok);
  bool up() const { return up_; }
  // No result yet since the start.
  bool fresh() const { return fresh_; }
  // Results in a row against the current state (toward a change).
  int streak() const { return streak_; }

 private:
  int rise_;
  int fall_;
  bool up_;
  bool fresh_ = true;
  int needed_first_;  // successes that bring a down server up (1 for an initial "down")
  int streak_ = 0;
};

// The longest time from a real server's failure to its removal, counted from the start of its
// first failed check: `fall` checks that each run to their timeout, with an interval between
// them. timeout x fall + interval x (fall - 1).
Millis failureWindow(const config::Check& check);
// The same for recovery, with rise: timeout x rise + interval x (rise - 1) at most.
Millis successWindow(const config::Check& check);

// When a real server's first check runs after a (re)start: a share of one interval, from a
// 16-bit random value, so that the checks of many servers spread over the interval.
Millis startOffset(Millis interval, uint16_t random);

// Slow start: a real server back from down gets its weight in steps over slow_start instead of
// its whole share at once: the share of slow_start elapsed, at least 1 (it takes some traffic
// from the start), the target once slow_start is over. Without a ramp (slow_start 0), or at
// weight 0, the target at once. The ramp moves every slowStartStep: kSlowStartSteps steps, at
// least kSlowStartMinStep apart, so a long ramp is not a stream of IPVS writes.
inline constexpr int kSlowStartSteps = 10;
inline constexpr Millis kSlowStartMinStep{200};
int slowStartWeight(int target, Millis elapsed, Millis slow_start);
// The time between two steps of the ramp.
Millis slowStartStep(Millis slow_start);

// "up" / "down", for logs and status.
std::string_view healthName(bool up);

}  // namespace tandem::resources::health
