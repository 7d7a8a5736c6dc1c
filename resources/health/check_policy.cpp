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

std::string_view healthName(bool up) { return up ? "up" : "down"; }

}  // namespace tandem::resources::health
