#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "health/checker.h"
#include "loop/dispatcher.h"

// What the socket checkers (tcp, udp, smtp) share around one probe: its socket and the watch
// on it, the one timer (the timeout, or 0 ms for a result known before probe() returned), and
// the done callback, called exactly once, from the loop, and last. Each checker keeps only
// what it says to the real server.
namespace tandem::resources::health {

class ProbeRun {
 public:
  // on_timeout: the timeout passed with the probe still running.
  ProbeRun(loop::Dispatcher& dispatcher, std::function<void()> on_timeout);
  ~ProbeRun();
  ProbeRun(const ProbeRun&) = delete;
  ProbeRun& operator=(const ProbeRun&) = delete;

  // Starts a probe (ending one still running, without calling back): done is kept, the clock
  // read.
  void begin(ProbeDone done);
  // Takes fd as the probe's socket and watches it. False if the loop cannot: the probe then
  // fails from the loop, saying so.
  bool watch(int fd, loop::FdEvents interest, std::function<void(loop::FdEvents)> on_ready);
  void setInterest(loop::FdEvents interest) { watch_->setInterest(interest); }
  void armTimeout(Millis timeout) { timer_->arm(timeout); }
  // A result known before probe() returned: delivered from the loop, the socket closed now.
  void soon(bool ok, std::string reason);
  // Ends the probe: the timer off, the socket closed, done called last (it may destroy the
  // checker, so the caller touches nothing after this).
  void finish(bool ok, std::string reason);
  // Abandons the probe without calling back.
  void cancel();

  int fd() const { return fd_; }

 private:
  void closeSocket();

  loop::Dispatcher& dispatcher_;
  std::unique_ptr<loop::Timer> timer_;
  std::unique_ptr<loop::FdWatch> watch_;
  int fd_ = -1;
  loop::MonoTime started_{};
  ProbeDone done_;
  std::optional<std::pair<bool, std::string>> soon_;
};

}  // namespace tandem::resources::health
