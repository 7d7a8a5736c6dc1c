#pragma once

#include <memory>

#include "loop/dispatcher.h"
#include "metrics/histogram.h"

// How late the loop runs a timer: a timer armed every kPeriod, and each time it fires, how far
// past its deadline (tandem_loop_lag_seconds). A callback that holds the loop (a long plan, a
// slow disk) shows here before it delays a heartbeat by the same amount.
namespace tandem::metrics {

class LoopLag {
 public:
  static constexpr Millis kPeriod{100};

  explicit LoopLag(loop::Dispatcher& dispatcher);
  const Histogram& histogram() const { return histogram_; }

 private:
  void onFire();

  loop::Dispatcher& dispatcher_;
  std::unique_ptr<loop::Timer> timer_;
  loop::MonoTime due_{};
  Histogram histogram_{Histogram::lagBounds()};
};

}  // namespace tandem::metrics
