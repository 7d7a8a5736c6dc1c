#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string_view>

#include "common/duration.h"
#include "common/result.h"

// The one event loop of the daemon, as an interface: production runs it on libqb's qb_loop
// (qb_dispatcher.h), tests on simulated time (test/fakes/sim_dispatcher.h). Logic arms timers
// and asks for the time here and nowhere else, so a test can replay hours of timers in
// microseconds and never sleeps.
namespace tandem::loop {

// CLOCK_MONOTONIC: the clock qb_loop arms its timers on and the one systemd reads in
// MONOTONIC_USEC=.
using MonoTime = std::chrono::steady_clock::time_point;

// Only the signals the daemon acts on; the implementation maps them to numbers.
enum class Signal { kTerminate, kHangup, kInterrupt };

inline std::string_view signalName(Signal s) {
  switch (s) {
    case Signal::kTerminate:
      return "TERM";
    case Signal::kHangup:
      return "HUP";
    case Signal::kInterrupt:
      return "INT";
  }
  return "?";
}

// What an fd watch asks for and what it reports. A hang-up or error is reported as readable
// (or writable when only that was asked for) so the next read or write sees it as EOF or errno.
struct FdEvents {
  bool readable = false;
  bool writable = false;
};

// A one-shot timer. Periodic work re-arms from its callback. Destroying the handle cancels it;
// a handle must not outlive its dispatcher.
class Timer {
 public:
  virtual ~Timer() = default;
  // Fires the callback once, delay from now. Arming a pending timer moves its deadline.
  virtual void arm(Millis delay) = 0;
  virtual void cancel() = 0;
  virtual bool armed() const = 0;
};

// Watches one fd until the handle is destroyed; a handle must not outlive its dispatcher.
class FdWatch {
 public:
  virtual ~FdWatch() = default;
  // Changes what is watched, e.g. writable only while output is queued.
  virtual void setInterest(FdEvents interest) = 0;
};

// Delivers one signal on the loop (not in signal context) until the handle is destroyed.
class SignalWatch {
 public:
  virtual ~SignalWatch() = default;
};

class Dispatcher {
 public:
  virtual ~Dispatcher() = default;

  virtual MonoTime now() const = 0;

  // Creating a timer cannot fail; arming one only fails when memory is exhausted, which the
  // implementation treats as fatal rather than burdening every caller with it.
  [[nodiscard]] virtual std::unique_ptr<Timer> createTimer(std::function<void()> on_fire) = 0;
  // Fails for an fd that is already watched or cannot be polled.
  [[nodiscard]] virtual Result<std::unique_ptr<FdWatch>> watchFd(
      int fd, FdEvents interest, std::function<void(FdEvents ready)> on_ready) = 0;
  // One watch per signal at a time.
  [[nodiscard]] virtual Result<std::unique_ptr<SignalWatch>> onSignal(
      Signal sig, std::function<void()> on_signal) = 0;

  // Runs callbacks until stop(); stop() may be called from any callback.
  virtual void run() = 0;
  virtual void stop() = 0;
};

}  // namespace tandem::loop
