#pragma once

#include <memory>
#include <string>
#include <vector>

#include "health/checker.h"
#include "loop/dispatcher.h"
#include "process/child_runner.h"

// The exec check: the configured command as a child process, healthy on exit status 0 (as
// ldirectord's and MON's checks). It runs with the real server in its environment:
//   TANDEM_VIRTUAL_SERVER   the virtual server's name
//   TANDEM_RS_ADDRESS       the real server's address (IPv6 without brackets)
//   TANDEM_RS_PORT          the port the check probes
//   TANDEM_CHECK_TIMEOUT_MS the time it has
// A check that outlives its timeout is killed with its whole process group (the child runner's
// rule) and counts as failed. Nothing waits on the loop: the exit is a loop event.
namespace tandem::resources::health {

// What an exit says: with exit_weight, 0 is healthy at the configured weight, 1 unhealthy and
// 2 to 255 healthy at weight status - 2 (keepalived's misc_dynamic); without it, 0 is healthy.
// A timeout or a signal is unhealthy either way.
struct ExitVerdict {
  bool ok = false;
  std::optional<int> weight;
};
ExitVerdict execVerdict(const process::ChildResult& r, bool exit_weight);

// The environment of one exec probe ("KEY=value").
std::vector<std::string> execEnvironment(const ProbeTarget& target);

class ExecChecker final : public Checker {
 public:
  ExecChecker(loop::Dispatcher& dispatcher, process::ChildRunner& children);
  ~ExecChecker() override;
  ExecChecker(const ExecChecker&) = delete;
  ExecChecker& operator=(const ExecChecker&) = delete;

  void probe(const ProbeTarget& target, ProbeDone done) override;
  void cancel() override;

 private:
  loop::Dispatcher& dispatcher_;
  process::ChildRunner& children_;
  std::unique_ptr<process::ChildHandle> child_;
  std::unique_ptr<loop::Timer> failed_;  // a start failure, reported from the loop
  std::string failure_;
  loop::MonoTime started_{};
  ProbeDone done_;
};

}  // namespace tandem::resources::health
