#pragma once

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "loop/dispatcher.h"

namespace tandem::fakes {

// A Dispatcher on simulated time. Nothing happens until the test says so: advance() moves the
// clock and fires the timers that fall due, in deadline order (ties in the order they were
// armed), each seeing now() at its own deadline; deliver() runs a signal's handler; fireFd()
// reports readiness on a watched fd. Hours of timers run in microseconds, and a test never
// sleeps.
class SimDispatcher final : public loop::Dispatcher {
 public:
  explicit SimDispatcher(loop::MonoTime start = loop::MonoTime(std::chrono::hours(1)))
      : now_(start) {}
  ~SimDispatcher() override { assert(timers_ == 0 && fds_.empty() && signals_.empty()); }

  loop::MonoTime now() const override { return now_; }

  std::unique_ptr<loop::Timer> createTimer(std::function<void()> on_fire) override {
    return std::make_unique<SimTimer>(*this, std::move(on_fire));
  }

  Result<std::unique_ptr<loop::FdWatch>> watchFd(
      int fd, loop::FdEvents interest, std::function<void(loop::FdEvents)> on_ready) override {
    if (fds_.count(fd)) return fail(ErrorCode::kAlreadyExists, "fd already watched");
    fds_[fd] = FdEntry{interest, std::move(on_ready)};
    return std::unique_ptr<loop::FdWatch>(std::make_unique<SimFdWatch>(*this, fd));
  }

  Result<std::unique_ptr<loop::SignalWatch>> onSignal(loop::Signal sig,
                                                      std::function<void()> on_signal) override {
    if (signals_.count(sig)) return fail(ErrorCode::kAlreadyExists, "signal already watched");
    signals_[sig] = std::move(on_signal);
    return std::unique_ptr<loop::SignalWatch>(std::make_unique<SimSignalWatch>(*this, sig));
  }

  // There is no real loop to block in: run() only records that it was called, and the test
  // drives time and events itself.
  void run() override { ++runs_; }
  void stop() override { stopped_ = true; }

  // Moves the clock by d, firing every timer that falls due on the way.
  void advance(Millis d) {
    const loop::MonoTime target = now_ + d;
    while (SimTimer* next = nextDue(target)) {
      now_ = next->deadline_;
      auto on_fire = next->on_fire_;  // the callback may destroy its timer
      const auto t0 = std::chrono::steady_clock::now();
      on_fire();
      longest_ = std::max(longest_, std::chrono::steady_clock::now() - t0);
    }
    now_ = target;
  }

  // Fires the one timer that is due next at now() (armed with 0 ms, or already late), as one
  // loop iteration would; the clock does not move. False when none is due.
  bool step() {
    SimTimer* next = nextDue(now_);
    if (next == nullptr) return false;
    auto on_fire = next->on_fire_;
    on_fire();
    return true;
  }

  // Runs the handler of sig as the loop would after the signal arrived. False when nothing
  // watches it (a real process would then take the default action).
  bool deliver(loop::Signal sig) {
    auto it = signals_.find(sig);
    if (it == signals_.end()) return false;
    auto on_signal = it->second;
    on_signal();
    return true;
  }

  // Reports readiness on a watched fd. False when it is not watched.
  bool fireFd(int fd, loop::FdEvents ready) {
    auto it = fds_.find(fd);
    if (it == fds_.end()) return false;
    auto on_ready = it->second.on_ready;
    on_ready(ready);
    return true;
  }

  bool stopped() const { return stopped_; }
  // The longest wall-clock time one timer callback took since the last resetLongest(): what a
  // real loop would have been held for by it (benchmarks of slicing).
  std::chrono::steady_clock::duration longestCallback() const { return longest_; }
  void resetLongest() { longest_ = {}; }
  int runs() const { return runs_; }
  size_t armedTimers() const { return due_.size(); }
  bool watchesSignal(loop::Signal sig) const { return signals_.count(sig) > 0; }
  std::optional<loop::FdEvents> fdInterest(int fd) const {
    auto it = fds_.find(fd);
    if (it == fds_.end()) return std::nullopt;
    return it->second.interest;
  }

 private:
  class SimTimer final : public loop::Timer {
   public:
    SimTimer(SimDispatcher& owner, std::function<void()> on_fire)
        : owner_(owner), on_fire_(std::move(on_fire)) {
      ++owner_.timers_;
    }
    ~SimTimer() override {
      cancel();
      --owner_.timers_;
    }
    SimTimer(const SimTimer&) = delete;
    SimTimer& operator=(const SimTimer&) = delete;

    void arm(Millis delay) override {
      cancel();
      deadline_ = owner_.now_ + std::max(delay, Millis(0));
      sequence_ = owner_.next_sequence_++;
      armed_ = true;
      owner_.due_.emplace(deadline_, sequence_, this);
    }
    void cancel() override {
      if (!armed_) return;
      owner_.due_.erase({deadline_, sequence_, this});
      armed_ = false;
    }
    bool armed() const override { return armed_; }

    SimDispatcher& owner_;
    std::function<void()> on_fire_;
    loop::MonoTime deadline_;
    uint64_t sequence_ = 0;
    bool armed_ = false;
  };

  class SimFdWatch final : public loop::FdWatch {
   public:
    SimFdWatch(SimDispatcher& owner, int fd) : owner_(owner), fd_(fd) {}
    ~SimFdWatch() override { owner_.fds_.erase(fd_); }
    SimFdWatch(const SimFdWatch&) = delete;
    SimFdWatch& operator=(const SimFdWatch&) = delete;
    void setInterest(loop::FdEvents interest) override { owner_.fds_[fd_].interest = interest; }

   private:
    SimDispatcher& owner_;
    int fd_;
  };

  class SimSignalWatch final : public loop::SignalWatch {
   public:
    SimSignalWatch(SimDispatcher& owner, loop::Signal sig) : owner_(owner), sig_(sig) {}
    ~SimSignalWatch() override { owner_.signals_.erase(sig_); }
    SimSignalWatch(const SimSignalWatch&) = delete;
    SimSignalWatch& operator=(const SimSignalWatch&) = delete;

   private:
    SimDispatcher& owner_;
    loop::Signal sig_;
  };

  struct FdEntry {
    loop::FdEvents interest;
    std::function<void(loop::FdEvents)> on_ready;
  };

  // The earliest armed timer due by limit, taken off the queue (the caller fires it).
  SimTimer* nextDue(loop::MonoTime limit) {
    if (due_.empty() || std::get<0>(*due_.begin()) > limit) return nullptr;
    SimTimer* next = std::get<2>(*due_.begin());
    due_.erase(due_.begin());
    next->armed_ = false;
    return next;
  }

  loop::MonoTime now_;
  uint64_t next_sequence_ = 0;
  size_t timers_ = 0;  // alive, armed or not
  // The armed timers by deadline, ties in arm order: each advance step takes the first.
  std::set<std::tuple<loop::MonoTime, uint64_t, SimTimer*>> due_;
  std::map<int, FdEntry> fds_;
  std::map<loop::Signal, std::function<void()>> signals_;
  bool stopped_ = false;
  std::chrono::steady_clock::duration longest_{};
  int runs_ = 0;
};

}  // namespace tandem::fakes
