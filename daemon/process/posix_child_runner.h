#pragma once

#include <map>
#include <memory>

#include "loop/dispatcher.h"
#include "process/child_runner.h"

namespace tandem::process {

// Children that were killed when their handle went away, reaped from the loop when their pidfd
// says they exited: a destructor never waits for a child.
class Reaper {
 public:
  explicit Reaper(loop::Dispatcher& dispatcher) : dispatcher_(dispatcher) {}
  // Reaps what has exited already; the rest are left to init when the daemon exits.
  ~Reaper();
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

  // Takes pid (killed already) and its pidfd, which it closes once pid is reaped.
  void adopt(int pid, int pidfd);
  size_t pending() const { return children_.size(); }

 private:
  struct Child {
    int pidfd = -1;
    std::unique_ptr<loop::FdWatch> watch;
  };
  void onExit(int pid);

  loop::Dispatcher& dispatcher_;
  std::map<int, Child> children_;
};

// fork/exec with a pidfd watched on the dispatcher (Linux 5.3+), output through a pipe, and a
// timer for the timeout. The child gets its own process group so a timeout kills what it
// spawned too. Destroying a handle kills the group and leaves the reaping to the loop.
class PosixChildRunner final : public ChildRunner {
 public:
  explicit PosixChildRunner(loop::Dispatcher& dispatcher)
      : dispatcher_(dispatcher), reaper_(std::make_shared<Reaper>(dispatcher)) {}
  Result<std::unique_ptr<ChildHandle>> run(const CommandLine& cmd,
                                           const std::vector<std::string>& env, Millis timeout,
                                           std::function<void(ChildResult)> done) override;

  // Children killed with their handle and not reaped yet.
  size_t reaping() const { return reaper_->pending(); }

 private:
  loop::Dispatcher& dispatcher_;
  // Shared with the handles, which may outlive the runner (not the dispatcher).
  std::shared_ptr<Reaper> reaper_;
};

}  // namespace tandem::process
