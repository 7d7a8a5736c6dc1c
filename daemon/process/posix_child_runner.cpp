#include "process/posix_child_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace tandem::process {

std::string ChildResult::describe() const {
  if (timed_out) return "timed out";
  if (term_signal != 0) return "killed by signal " + std::to_string(term_signal);
  return "exit " + std::to_string(exit_code);
}

namespace {

constexpr size_t kMaxOutput = 4096;

class PosixChild final : public ChildHandle {
 public:
  PosixChild(loop::Dispatcher& d, std::shared_ptr<Reaper> reaper, pid_t pid, int pidfd, int out_fd,
             std::function<void(ChildResult)> done)
      : reaper_(std::move(reaper)),
        pid_(pid),
        pidfd_(pidfd),
        out_fd_(out_fd),
        done_(std::move(done)) {
    timer_ = d.createTimer([this] { onTimeout(); });
    auto w = d.watchFd(pidfd_, {true, false}, [this](loop::FdEvents) { onExit(); });
    if (w) exit_watch_ = std::move(*w);
    auto o = d.watchFd(out_fd_, {true, false}, [this](loop::FdEvents) { drain(); });
    if (o) out_watch_ = std::move(*o);
  }

  ~PosixChild() override {
    exit_watch_.reset();
    out_watch_.reset();
    if (out_fd_ >= 0) ::close(out_fd_);
    if (reaped_) {
      ::close(pidfd_);
      return;
    }
    // The group dies at once, but the exit is reported later: the loop reaps it then.
    ::kill(-pid_, SIGKILL);
    reaper_->adopt(pid_, pidfd_);
  }

  void arm(Millis timeout) { timer_->arm(timeout); }

 private:
  void drain() {
    char buf[1024];
    for (;;) {
      ssize_t n = ::read(out_fd_, buf, sizeof buf);
      if (n > 0) {
        size_t room = kMaxOutput - std::min(kMaxOutput, output_.size());
        output_.append(buf, std::min(room, static_cast<size_t>(n)));
        continue;
      }
      if (n == 0) {
        out_watch_.reset();
        ::close(out_fd_);
        out_fd_ = -1;
      }
      return;  // EAGAIN, or closed
    }
  }

  void onTimeout() {
    timed_out_ = true;
    ::kill(-pid_, SIGKILL);  // the exit arrives on the pidfd
  }

  void onExit() {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r != pid_) return;
    reaped_ = true;
    timer_->cancel();
    exit_watch_.reset();
    if (out_fd_ >= 0) drain();
    ChildResult res;
    res.timed_out = timed_out_;
    if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) res.term_signal = timed_out_ ? 0 : WTERMSIG(status);
    res.output = output_;
    auto done = std::move(done_);
    done_ = nullptr;
    if (done) done(std::move(res));  // may destroy this object: nothing after it
  }

  std::shared_ptr<Reaper> reaper_;
  pid_t pid_;
  int pidfd_;
  int out_fd_;
  std::function<void(ChildResult)> done_;
  std::unique_ptr<loop::Timer> timer_;
  std::unique_ptr<loop::FdWatch> exit_watch_;
  std::unique_ptr<loop::FdWatch> out_watch_;
  std::string output_;
  bool timed_out_ = false;
  bool reaped_ = false;
};

}  // namespace

Reaper::~Reaper() {
  for (auto& [pid, c] : children_) {
    c.watch.reset();
    (void)::waitpid(pid, nullptr, WNOHANG);
    ::close(c.pidfd);
  }
}

void Reaper::adopt(int pid, int pidfd) {
  if (::waitpid(pid, nullptr, WNOHANG) == pid) {
    ::close(pidfd);
    return;
  }
  Child c;
  c.pidfd = pidfd;
  auto w = dispatcher_.watchFd(pidfd, {true, false}, [this, pid](loop::FdEvents) { onExit(pid); });
  // Without a watch the child is reaped by init once the daemon exits: still no waiting here.
  if (w) c.watch = std::move(*w);
  children_.emplace(pid, std::move(c));
}

void Reaper::onExit(int pid) {
  if (::waitpid(pid, nullptr, WNOHANG) != pid) return;
  auto it = children_.find(pid);
  if (it == children_.end()) return;
  const int pidfd = it->second.pidfd;
  children_.erase(it);  // destroys the watch whose callback this is: nothing after it but close
  ::close(pidfd);
}

Result<std::unique_ptr<ChildHandle>> PosixChildRunner::run(const CommandLine& cmd,
                                                           const std::vector<std::string>& env,
                                                           Millis timeout,
                                                           std::function<void(ChildResult)> done) {
  if (cmd.argv.empty()) return fail(ErrorCode::kInvalidArgument, "empty command");
  std::vector<std::string> args =
      cmd.via_shell ? std::vector<std::string>{"/bin/sh", "-c", cmd.argv[0]} : cmd.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  envs.insert(envs.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);

  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0) return fail(errnoError(errno, "pipe2"));
  // posix_spawn, not fork: glibc starts the child with vfork semantics, on the daemon's own
  // memory until it execs. A fork copied the page tables of the whole daemon and left every page
  // it wrote meanwhile to a copy-on-write fault: under a storm of exec checks (25 a second) that
  // was most of the daemon's CPU (perf: copy_page_range, the faults, _Fork), and its heartbeats
  // waited behind it.
  // The child: its own process group, no signal blocked, stdin /dev/null, stdout and stderr the
  // pipe, and nothing else of the daemon's (sockets of running probes, the IPC, libqb's: those
  // without O_CLOEXEC, libcurl's for one, would outlive the probe in a hung check).
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_init(&actions);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return fail(errnoError(spawned, std::string("cannot run ") + argv[0]));
  }
  ::close(pipefd[1]);
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    int err = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::close(pipefd[0]);
    return fail(errnoError(err, "pidfd_open"));
  }
  auto child =
      std::make_unique<PosixChild>(dispatcher_, reaper_, pid, pidfd, pipefd[0], std::move(done));
  child->arm(timeout);
  return std::unique_ptr<ChildHandle>(std::move(child));
}

}  // namespace tandem::process
