#pragma once

#include "common/duration.h"

namespace tandem::corosync {

// The delays between reconnect attempts: initial, doubling, capped at max. A restarted corosync
// answers within a few seconds, so the cap keeps the daemon from reconnecting long after it is
// back; the doubling keeps a daemon whose corosync stays down from spinning.
class Backoff {
 public:
  Backoff(Millis initial, Millis max);

  // The delay to wait before the next attempt; each call doubles the one after, up to max.
  [[nodiscard]] Millis next();
  // After a success: the next failure starts again from initial.
  void reset() { current_ = initial_; }

 private:
  Millis initial_;
  Millis max_;
  Millis current_;
};

}  // namespace tandem::corosync
