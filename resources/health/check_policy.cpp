#include "health/check_policy.h"

#include <algorithm>

namespace tandem::resources::health {

RiseFall::RiseFall(int rise, int fall, config::InitialHealth initial)
    : rise_(std::max(rise, 1)),
      fall_(std::max(fall, 1)),
      up_(initial == config::InitialHealth::kUp),
      needed_first_(initial == config::InitialHealth::kDown ? 1 : rise_) {}

bool RiseFall::record(bool ok) {
  fresh_ = false;
  if (ok == up_) {
    streak_ = 0;
    return false;
  }
  ++streak_;
  const int needed = up_ ? fall_ : needed_first_;
  if (streak_ < needed) return false;
  up_ = ok;
  streak_ = 0;
  // An initial "down" needs one success only until the server has first been up.
  needed_first_ = rise_;
  return true;
}

Millis failureWindow(const config::Check& check) {
  return check.timeout * check.fall + check.interval * (check.fall - 1);
}

Millis successWindow(const config::Check& check) {
  return check.timeout * check.rise + check.interval * (check.rise - 1);
}

Millis startOffset(Millis interval, uint16_t random) {
  return Millis(interval.count() * static_cast<int64_t>(random) / 65536);
}

Millis slowStartStep(Millis slow_start) {
  return std::max(kSlowStartMinStep, slow_start / kSlowStartSteps);
}

int slowStartWeight(int target, Millis elapsed, Millis slow_start) {
  if (target <= 0 || slow_start <= Millis(0) || elapsed >= slow_start) return target;
  const int64_t w =
      static_cast<int64_t>(target) * std::max<int64_t>(0, elapsed.count()) / slow_start.count();
  return static_cast<int>(std::clamp<int64_t>(w, 1, target));
}

std::string_view healthName(bool up) { return up ? "up" : "down"; }

}  // namespace tandem::resources::health
