#include "corosync/backoff.h"

#include <algorithm>

namespace tandem::corosync {

Backoff::Backoff(Millis initial, Millis max)
    : initial_(std::max(initial, Millis(1))), max_(std::max(max, initial_)), current_(initial_) {}

Millis Backoff::next() {
  Millis now = current_;
  current_ = std::min(current_ * 2, max_);
  return now;
}

}  // namespace tandem::corosync
