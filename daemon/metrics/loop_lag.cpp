#include "metrics/loop_lag.h"

#include <chrono>

namespace tandem::metrics {

LoopLag::LoopLag(loop::Dispatcher& dispatcher)
    : dispatcher_(dispatcher), timer_(dispatcher.createTimer([this] { onFire(); })) {
  due_ = dispatcher_.now() + kPeriod;
  timer_->arm(kPeriod);
}

void LoopLag::onFire() {
  const loop::MonoTime now = dispatcher_.now();
  const auto late = std::chrono::duration<double>(now - due_).count();
  histogram_.observe(late > 0 ? late : 0.0);
  due_ = now + kPeriod;
  timer_->arm(kPeriod);
}

}  // namespace tandem::metrics
