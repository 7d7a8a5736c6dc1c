#pragma once

#include "health/checker.h"
#include "health/probe_run.h"
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
  ProbeRun run_;
  Millis timeout_{0};
};

}  // namespace tandem::resources::health
