#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/duration.h"
#include "common/result.h"

// Child processes (the fence command, exec health checks) behind an interface: the daemon never
// waits for one, and a test swaps in a fake that answers on simulated time.
namespace tandem::process {

struct CommandLine {
  std::vector<std::string> argv;  // argv[0] is an absolute path, or the shell line
  bool via_shell = false;         // run argv[0] under /bin/sh -c
};

struct ChildResult {
  bool timed_out = false;
  int exit_code = -1;   // when it exited
  int term_signal = 0;  // when a signal ended it
  std::string output;   // the start of its stdout and stderr, for the log
  bool ok() const { return !timed_out && term_signal == 0 && exit_code == 0; }
  std::string describe() const;  // "exit 0", "killed by signal 9", "timed out after 30s"
};

// Owns one running child. Destroying it kills the child's process group and drops the callback.
class ChildHandle {
 public:
  virtual ~ChildHandle() = default;
};

class ChildRunner {
 public:
  virtual ~ChildRunner() = default;
  // Starts the command with extra environment ("KEY=value") and calls done once, on the loop,
  // when it exits or when timeout passes (then the child's process group is killed).
  [[nodiscard]] virtual Result<std::unique_ptr<ChildHandle>> run(
      const CommandLine& cmd, const std::vector<std::string>& env, Millis timeout,
      std::function<void(ChildResult)> done) = 0;
};

}  // namespace tandem::process
