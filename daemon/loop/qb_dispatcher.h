#pragma once

#include <qb/qbloop.h>
#include <sys/epoll.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "common/result.h"
#include "loop/dispatcher.h"

namespace tandem::loop {

// The Dispatcher on libqb's qb_loop, the loop corosync and pacemaker run on (and qb_ipcs through
// qbLoop()). One per process: libqb's signal pipe is process-global, and adding a signal resets
// the disposition of every signal it does not watch to SIG_DFL.
//
// Fds and timers do not go to libqb one by one: libqb 2.0.6's loop is linear in its sources
// (poll_add and poll_del search its array by fd, every turn walks every entry, each timer is a
// timerfd of its own), which at 10,000 health probes in flight cost a whole core. The dispatcher
// keeps its own epoll set and one timerfd over an ordered set of deadlines, and registers just
// those two fds with libqb, so a watch or a timer costs O(log n) and libqb still runs the turn.
class QbDispatcher final : public Dispatcher {
 public:
  [[nodiscard]] static Result<std::unique_ptr<QbDispatcher>> create();
  ~QbDispatcher() override;
  QbDispatcher(const QbDispatcher&) = delete;
  QbDispatcher& operator=(const QbDispatcher&) = delete;

  MonoTime now() const override;
  std::unique_ptr<Timer> createTimer(std::function<void()> on_fire) override;
  Result<std::unique_ptr<FdWatch>> watchFd(int fd, FdEvents interest,
                                           std::function<void(FdEvents ready)> on_ready) override;
  Result<std::unique_ptr<SignalWatch>> onSignal(Signal sig,
                                                std::function<void()> on_signal) override;
  void run() override;
  void stop() override;

  // For libqb services (qb_ipcs) that must be driven by the same loop.
  qb_loop_t* qbLoop() { return loop_; }

 private:
  struct FdEntry;
  class QbTimer;
  class QbFdWatch;
  class QbSignalWatch;
  using TimerQueue = std::multimap<MonoTime, QbTimer*>;

  // Fd events handled per turn before libqb gets the loop back (IPC, signals, its own timers).
  static constexpr int kFdBatch = 64;

  QbDispatcher(qb_loop_t* loop, int epoll_fd, int timer_fd);
  [[nodiscard]] Result<void> addSignal(int signo, std::function<void()> on_signal);
  void removeSignal(int signo);
  void releaseFd(FdEntry& entry);
  TimerQueue::iterator addDeadline(MonoTime deadline, QbTimer* timer);
  void programTimerFd(MonoTime deadline);
  void runFdBatch();
  void runDueTimers();
  static int32_t dispatchEpoll(int32_t fd, int32_t revents, void* data);
  static int32_t dispatchTimerFd(int32_t fd, int32_t revents, void* data);
  static int32_t dispatchSignal(int32_t signo, void* data);

  struct SignalEntry {
    qb_loop_signal_handle handle = nullptr;
    std::function<void()> on_signal;
  };

  qb_loop_t* loop_;
  int epoll_fd_;
  int timer_fd_;
  // The watched entry of each fd number (one watch per fd), so an epoll event names its entry by
  // fd and generation: an event already fetched for a watch destroyed since finds no entry.
  std::vector<FdEntry*> fds_;
  uint32_t next_generation_ = 0;
  bool in_fd_batch_ = false;
  // Entries whose watch was destroyed during a batch; freed once the batch is over.
  std::vector<std::unique_ptr<FdEntry>> retired_fds_;
  std::array<epoll_event, kFdBatch> events_{};
  // Armed timers by deadline; equal deadlines keep arm order (multimap inserts at the end).
  TimerQueue timers_;
  // What timer_fd_ is set to expire at; MonoTime::max() when disarmed.
  MonoTime timer_fd_deadline_ = MonoTime::max();
  std::map<int, SignalEntry> signals_;
};

}  // namespace tandem::loop
