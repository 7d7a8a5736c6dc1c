#pragma once

#include "loop/dispatcher.h"
#include "process/child_runner.h"

namespace tandem::process {

// fork/exec with a pidfd watched on the dispatcher (Linux 5.3+), output through a pipe, and a
// timer for the timeout. The child gets its own process group so a timeout kills what it
// spawned too.
class PosixChildRunner final : public ChildRunner {
 public:
  explicit PosixChildRunner(loop::Dispatcher& dispatcher) : dispatcher_(dispatcher) {}
  Result<std::unique_ptr<ChildHandle>> run(const CommandLine& cmd,
                                           const std::vector<std::string>& env, Millis timeout,
                                           std::function<void(ChildResult)> done) override;

 private:
  loop::Dispatcher& dispatcher_;
};

}  // namespace tandem::process
