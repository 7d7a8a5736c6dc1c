#pragma once

#include "common/result.h"

namespace tandem::platform {

// The daemon's end of the pipe to the process the user started, which waits on it.
class DetachedProcess {
 public:
  explicit DetachedProcess(int report_fd) : report_fd_(report_fd) {}
  DetachedProcess(DetachedProcess&& other) noexcept : report_fd_(other.report_fd_) {
    other.report_fd_ = -1;
  }
  DetachedProcess& operator=(DetachedProcess&&) = delete;
  DetachedProcess(const DetachedProcess&) = delete;
  DetachedProcess& operator=(const DetachedProcess&) = delete;
  // An unreported start reads as a failure to the waiting process.
  ~DetachedProcess();

  // Hands exit_code to the waiting process, which exits with it. On success stdin, stdout
  // and stderr then go to /dev/null; on failure they stay, the daemon is about to exit.
  void reportStarted(int exit_code);

 private:
  int report_fd_;
};

// Classic SysV daemonizing, for runs outside systemd (units pass --foreground): fork, setsid,
// fork again so the daemon can never reacquire a controlling terminal, chdir to /. Returns in
// the daemon only. The original process waits for reportStarted() and exits with its code, so
// `tandemd && echo started` means what it says.
[[nodiscard]] Result<DetachedProcess> daemonize();

}  // namespace tandem::platform
