#include "platform/daemonize.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace tandem::platform {

DetachedProcess::~DetachedProcess() {
  if (report_fd_ >= 0) ::close(report_fd_);
}

void DetachedProcess::reportStarted(int exit_code) {
  if (report_fd_ < 0) return;
  auto code = static_cast<unsigned char>(exit_code);
  ssize_t n = 0;
  do {
    n = ::write(report_fd_, &code, 1);
  } while (n < 0 && errno == EINTR);
  ::close(report_fd_);
  report_fd_ = -1;
  if (exit_code != 0) return;
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) return;
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) (void)::dup2(null_fd, fd);
  if (null_fd > STDERR_FILENO) ::close(null_fd);
}

Result<DetachedProcess> daemonize() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return fail(errnoError(errno, "cannot create a pipe"));
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return fail(errnoError(err, "cannot fork"));
  }
  if (pid > 0) {
    // The original process: wait for the verdict. EOF without one means the daemon died.
    ::close(fds[1]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    unsigned char code = 1;
    ssize_t n = 0;
    do {
      n = ::read(fds[0], &code, 1);
    } while (n < 0 && errno == EINTR);
    ::_exit(n == 1 ? code : 1);
  }
  ::close(fds[0]);
  if (::setsid() < 0) {
    std::perror("tandemd: setsid");
    ::_exit(1);
  }
  pid = ::fork();
  if (pid < 0) {
    std::perror("tandemd: fork");
    ::_exit(1);
  }
  if (pid > 0) ::_exit(0);
  if (::chdir("/") != 0) {
    // Not fatal: it only keeps a mount point busy.
  }
  return DetachedProcess(fds[1]);
}

}  // namespace tandem::platform
