#pragma once

#include <qb/qbloop.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "common/result.h"
#include "loop/dispatcher.h"

namespace tandem::loop {

// The Dispatcher on libqb's qb_loop (epoll, a timerfd per armed timer, signals through a
// self-pipe), the loop corosync and pacemaker run on. One per process: libqb's signal pipe is
// process-global, and adding a signal resets the disposition of every signal it does not watch
// to SIG_DFL.
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

  explicit QbDispatcher(qb_loop_t* loop);
  [[nodiscard]] Result<void> addSignal(int signo, std::function<void()> on_signal);
  void removeSignal(int signo);
  static int32_t dispatchFd(int32_t fd, int32_t revents, void* data);
  static int32_t dispatchSignal(int32_t signo, void* data);

  struct SignalEntry {
    qb_loop_signal_handle handle = nullptr;
    std::function<void()> on_signal;
  };

  qb_loop_t* loop_;
  std::set<int> watched_fds_;  // qb_loop_poll_* find entries by fd, so one watch per fd
  std::map<int, SignalEntry> signals_;
  // Entries whose watch was destroyed from inside their own callback; freed once it returns.
  std::vector<std::unique_ptr<FdEntry>> retired_fds_;
};

}  // namespace tandem::loop
