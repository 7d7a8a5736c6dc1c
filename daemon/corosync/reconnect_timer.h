#pragma once

#include <functional>
#include <memory>

#include "common/duration.h"
#include "corosync/backoff.h"
#include "loop/dispatcher.h"

namespace tandem::corosync {

// The connect/retry cycle the corosync clients share: attempts run from a dispatcher timer,
// never in a sleeping loop, so a corosync that is down or restarting never stalls the daemon.
class ReconnectTimer {
 public:
  ReconnectTimer(loop::Dispatcher& dispatcher, Millis initial, Millis max,
                 std::function<void()> attempt)
      : backoff_(initial, max), timer_(dispatcher.createTimer(std::move(attempt))) {}

  // The next attempt on the next loop turn: the first connection, and the first try after a
  // loss (the engine may already be back, e.g. after a quick restart).
  void attemptSoon() { timer_->arm(Millis(0)); }
  // After a failed attempt: arms the next one after the backoff delay and returns that delay.
  Millis retryLater() {
    Millis delay = backoff_.next();
    timer_->arm(delay);
    return delay;
  }
  void succeeded() {
    timer_->cancel();
    backoff_.reset();
  }
  // One attempt of a client: connect(); when it fails, the next try is armed and the listener
  // hears why and when (onConnectFailed), and when it succeeds the backoff starts over. True
  // when connected.
  template <typename Connect, typename Listener>
  bool attempt(Connect&& connect, Listener& listener) {
    if (auto r = connect(); !r) {
      const Millis retry_in = retryLater();
      listener.onConnectFailed(r.error(), retry_in);
      return false;
    }
    succeeded();
    return true;
  }
  [[nodiscard]] bool pending() const { return timer_->armed(); }

 private:
  Backoff backoff_;
  std::unique_ptr<loop::Timer> timer_;
};

}  // namespace tandem::corosync
