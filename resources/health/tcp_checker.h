#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "health/checker.h"
#include "loop/dispatcher.h"

// The tcp check: a non-blocking connect to the real server, healthy when it completes within
// the timeout. Nothing is sent or read. With tcp_reset the probe closes with a reset
// (SO_LINGER 0), so the real server keeps no TIME_WAIT for it. Where the kernel is touched.
namespace tandem::resources::health {

class TcpChecker final : public Checker {
 public:
  explicit TcpChecker(loop::Dispatcher& dispatcher);
  ~TcpChecker() override;
  TcpChecker(const TcpChecker&) = delete;
  TcpChecker& operator=(const TcpChecker&) = delete;

  void probe(const ProbeTarget& target, ProbeDone done) override;
  void cancel() override;

 private:
  void finish(bool ok, std::string reason);
  void closeSocket();

  loop::Dispatcher& dispatcher_;
  std::unique_ptr<loop::Timer> timer_;  // the timeout, or 0 ms for a result known at once
  std::unique_ptr<loop::FdWatch> watch_;
  int fd_ = -1;
  bool reset_ = false;
  loop::MonoTime started_{};
  Millis timeout_{0};
  ProbeDone done_;
  // A result known before probe() returned, delivered from the loop.
  std::optional<std::pair<bool, std::string>> early_;
};

}  // namespace tandem::resources::health
