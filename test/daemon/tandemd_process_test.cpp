// The real tandemd binary against a real NOTIFY_SOCKET: the test plays systemd. It binds an
// AF_UNIX datagram socket in a temp dir, starts tandemd with NOTIFY_SOCKET and WATCHDOG_USEC
// pointing at it, and reads what arrives with poll deadlines; nothing waits a fixed time.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Generous: the sanitizer build starts slowly. A passing run never waits this long.
constexpr auto kPatience = 15s;

constexpr char kGood[] =
    "[cluster]\nname = \"t\"\n[[cluster.key]]\nid = 1\nfile = \"authkey\"\n"
    "[[node]]\nname = \"a\"\ninterfaces = [\"eth0\"]\n";
constexpr char kGoodReprioritised[] =
    "[cluster]\nname = \"t\"\n[[cluster.key]]\nid = 1\nfile = \"authkey\"\n"
    "[[node]]\nname = \"a\"\npriority = 150\ninterfaces = [\"eth0\"]\n";
constexpr char kBroken[] =
    "[cluster]\nname = \"t\"\n[[cluster.key]]\nid = 1\nfile = \"authkey\"\n"
    "[[node]]\nname = \"a\"\npriority = \"high\"\ninterfaces = [\"eth0\"]\n";

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const std::string& path, const std::string& contents, mode_t mode = 0644) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << contents;
  }
  ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

// Lines of a notify message, which is newline-separated VAR=value assignments.
std::vector<std::string> lines(const std::string& message) {
  std::vector<std::string> out;
  std::stringstream s(message);
  for (std::string l; std::getline(s, l);) out.push_back(l);
  return out;
}

bool hasLine(const std::string& message, const std::string& line) {
  for (const auto& l : lines(message)) {
    if (l == line) return true;
  }
  return false;
}

std::optional<std::string> valueOf(const std::string& message, const std::string& name) {
  for (const auto& l : lines(message)) {
    if (l.rfind(name + "=", 0) == 0) return l.substr(name.size() + 1);
  }
  return std::nullopt;
}

int msUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits for pid to exit; its exit code (128 + signal when killed) or nullopt at the deadline.
std::optional<int> waitExit(pid_t pid, Clock::time_point deadline) {
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    while (::poll(&p, 1, msUntil(deadline)) < 0 && errno == EINTR) {
    }
    ::close(pidfd);
  }
  int status = 0;
  pid_t r = ::waitpid(pid, &status, pidfd >= 0 ? WNOHANG : 0);
  if (r != pid) return std::nullopt;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool alive(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == 0;
}

// A UDP port nobody holds right now, so that tests running side by side (ctest -j) do not
// fight over the shipped heartbeat port.
uint16_t freeUdpPort() {
  int fd = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  socklen_t len = sizeof a;
  uint16_t port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin6_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

class TandemdProcessTest : public ::testing::Test {
 protected:
  // The config text with this test's own heartbeat port (one line after [cluster]: findings
  // in the node table are one line further down) and IPC name.
  std::string conf(const char* text) const {
    std::string out(text);
    std::string own = "[cluster]\nheartbeat_port = " + std::to_string(port_) + "\n";
    out.replace(out.find("[cluster]\n"), std::string("[cluster]\n").size(), own);
    // The state in the test's own directory, never the host's /var/lib/tandem.
    return out + "[control]\nipc_name = \"tandem-test-" + std::to_string(port_) + "\"\n" +
           "[daemon]\nstate_dir = \"" + dir_ + "/state\"\n";
  }

  void SetUp() override {
    port_ = freeUdpPort();
    ASSERT_NE(port_, 0);
    char tmpl[] = "/tmp/tandemd-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    config_ = dir_ + "/tandem.conf";
    stderr_path_ = dir_ + "/stderr.log";
    std::string key(32, '\0');
    std::ifstream("/dev/urandom", std::ios::binary).read(key.data(), 32);
    writeFile(dir_ + "/authkey", key, 0600);
    writeFile(config_, conf(kGood));

    notify_path_ = dir_ + "/notify";
    notify_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(notify_fd_, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(notify_path_.size(), sizeof addr.sun_path);
    std::strncpy(addr.sun_path, notify_path_.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(notify_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0)
        << std::strerror(errno);
  }

  void TearDown() override {
    for (pid_t pid : started_) {
      // Only the processes this test started, and only if a failed assertion left them.
      if (alive(pid)) {
        ::kill(pid, SIGKILL);
        (void)waitExit(pid, Clock::now() + kPatience);
      }
    }
    if (notify_fd_ >= 0) ::close(notify_fd_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Starts tandemd with args, the notify socket, WATCHDOG_USEC=1s and WATCHDOG_PID set to its
  // own pid, stderr to a file.
  pid_t spawn(const std::vector<std::string>& args) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string v(*e);
      // JOURNAL_STREAM would make tandemd think stderr is the journal.
      if (v.rfind("NOTIFY_SOCKET=", 0) == 0 || v.rfind("WATCHDOG_", 0) == 0 ||
          v.rfind("JOURNAL_STREAM=", 0) == 0) {
        continue;
      }
      env.push_back(v);
    }
    env.push_back("NOTIFY_SOCKET=" + notify_path_);
    env.push_back("WATCHDOG_USEC=1000000");
    env.push_back("TANDEM_NODE=a");  // the config's node; the host name is something else
    std::vector<std::string> argv_s = {TANDEMD_PATH};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    const size_t pid_slot = envp.size();
    envp.push_back(nullptr);  // WATCHDOG_PID=, filled in by the child, which knows its pid
    envp.push_back(nullptr);
    int err_fd = ::open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    EXPECT_GE(err_fd, 0);

    pid_t pid = ::fork();
    if (pid == 0) {
      char watchdog_pid[48];
      std::snprintf(watchdog_pid, sizeof watchdog_pid, "WATCHDOG_PID=%d",
                    static_cast<int>(::getpid()));
      envp[pid_slot] = watchdog_pid;
      ::dup2(err_fd, STDERR_FILENO);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(err_fd);
    EXPECT_GT(pid, 0);
    started_.push_back(pid);
    return pid;
  }

  // The next datagram on the notify socket, or nullopt at the deadline.
  std::optional<std::string> receive(Clock::time_point deadline) {
    pollfd p{notify_fd_, POLLIN, 0};
    int n = 0;
    do {
      n = ::poll(&p, 1, msUntil(deadline));
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return std::nullopt;
    char buf[4096];
    ssize_t got = ::recv(notify_fd_, buf, sizeof buf, 0);
    if (got < 0) return std::nullopt;
    return std::string(buf, static_cast<size_t>(got));
  }

  // Reads messages until one satisfies pred, skipping the rest (watchdog pings, mostly).
  std::optional<std::string> receiveUntil(const std::function<bool(const std::string&)>& pred,
                                          Clock::time_point deadline) {
    while (auto m = receive(deadline)) {
      if (pred(*m)) return m;
    }
    return std::nullopt;
  }

  std::optional<std::string> receiveLine(const std::string& line) {
    return receiveUntil([&](const std::string& m) { return hasLine(m, line); },
                        Clock::now() + kPatience);
  }

  // Runs tandemd to completion (it must not need the notify socket); its exit code.
  std::optional<int> runToExit(const std::vector<std::string>& args) {
    pid_t pid = spawn(args);
    return waitExit(pid, Clock::now() + kPatience);
  }

  uint16_t port_ = 0;
  std::string dir_;
  std::string config_;
  std::string stderr_path_;
  std::string notify_path_;
  int notify_fd_ = -1;
  std::vector<pid_t> started_;
};

TEST_F(TandemdProcessTest, SendsReadyThenPingsTheWatchdogAtHalfItsPeriodAndStopsOnTerm) {
  pid_t pid = spawn({"--foreground", "--config", config_});

  auto ready = receiveLine("READY=1");
  ASSERT_TRUE(ready) << readAll(stderr_path_);
  EXPECT_EQ(valueOf(*ready, "STATUS"), "Running config generation 1: cluster t, 1 node");
  EXPECT_FALSE(valueOf(*ready, "MAINPID")) << "a foreground daemon is the main process";

  // WATCHDOG_USEC=1s: a ping every 0.5 s. Anything between a quarter and the whole period
  // keeps systemd content and proves the period was read.
  std::vector<Clock::time_point> pings;
  while (pings.size() < 6) {
    auto m = receive(Clock::now() + kPatience);
    ASSERT_TRUE(m) << "only " << pings.size() << " watchdog pings";
    if (hasLine(*m, "WATCHDOG=1")) pings.push_back(Clock::now());
  }
  std::ostringstream gaps;
  for (size_t i = 1; i < pings.size(); ++i) {
    auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(pings[i] - pings[i - 1]);
    gaps << (i > 1 ? " " : "") << gap.count() << "ms";
    EXPECT_GE(gap, 250ms) << "a quarter of WATCHDOG_USEC 1 s: the period was not read";
    // The whole period is the line systemd kills at: the half-period pings leave 500 ms for load.
    EXPECT_LE(gap, 1000ms) << "a gap of " << gap.count() << " ms > WATCHDOG_USEC 1,000 ms";
  }
  std::cout << "watchdog gaps: " << gaps.str() << "\n";
  RecordProperty("watchdog_gaps", gaps.str());

  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  auto stopping = receiveLine("STOPPING=1");
  ASSERT_TRUE(stopping);
  EXPECT_EQ(waitExit(pid, Clock::now() + kPatience), 0);
}

TEST_F(TandemdProcessTest, HupWithABrokenConfigIsRejectedAndTheDaemonKeepsRunning) {
  pid_t pid = spawn({"--foreground", "--config", config_});
  ASSERT_TRUE(receiveLine("READY=1")) << readAll(stderr_path_);
  writeFile(config_, conf(kBroken));

  ASSERT_EQ(::kill(pid, SIGHUP), 0);

  auto reloading = receiveLine("RELOADING=1");
  ASSERT_TRUE(reloading);
  auto usec = valueOf(*reloading, "MONOTONIC_USEC");
  ASSERT_TRUE(usec);
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  auto now_usec = static_cast<long long>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
  EXPECT_LT(std::llabs(now_usec - std::stoll(*usec)), 10'000'000LL) << "not CLOCK_MONOTONIC";
  auto rejected = receiveLine("READY=1");
  ASSERT_TRUE(rejected);
  EXPECT_EQ(valueOf(*rejected, "STATUS"), "Reload rejected (1 error in " + config_ +
                                              "), keeping config generation 1: cluster t, 1 node");
  EXPECT_TRUE(alive(pid));
  EXPECT_TRUE(receiveLine("WATCHDOG=1")) << "the loop stopped after the rejection";
  std::string log = readAll(stderr_path_);
  EXPECT_TRUE(contains(log, config_ + ":9:12: node.priority")) << log;
  EXPECT_NE(log.find("config reload rejected"), std::string::npos) << log;

  // The daemon still reloads once the file is fixed.
  writeFile(config_, conf(kGoodReprioritised));
  ASSERT_EQ(::kill(pid, SIGHUP), 0);
  auto accepted = receiveUntil(
      [](const std::string& m) { return hasLine(m, "READY=1") && !hasLine(m, "RELOADING=1"); },
      Clock::now() + kPatience);
  ASSERT_TRUE(accepted);
  EXPECT_EQ(valueOf(*accepted, "STATUS"),
            "Running config generation 2: cluster t, 1 node (reloaded: nodes)");

  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  EXPECT_TRUE(receiveLine("STOPPING=1"));
  EXPECT_EQ(waitExit(pid, Clock::now() + kPatience), 0);
}

TEST_F(TandemdProcessTest, ExitsOneWithoutReadyWhenTheConfigIsInvalidAtStart) {
  writeFile(config_, conf(kBroken));

  EXPECT_EQ(runToExit({"--foreground", "--config", config_}), 1);

  auto status = receive(Clock::now() + kPatience);
  ASSERT_TRUE(status);
  EXPECT_FALSE(hasLine(*status, "READY=1"));
  EXPECT_EQ(valueOf(*status, "STATUS"), "Not started: 1 error in " + config_);
  std::string log = readAll(stderr_path_);
  EXPECT_TRUE(contains(log, config_ + ":9:12: ")) << log;
}

TEST_F(TandemdProcessTest, CheckConfigExitsZeroForAValidFile) {
  EXPECT_EQ(runToExit({"--check-config", "--config", config_}), 0);
  EXPECT_EQ(readAll(stderr_path_), "");
  EXPECT_FALSE(receive(Clock::now())) << "--check-config must not talk to the service manager";
}

TEST_F(TandemdProcessTest, CheckConfigExitsOneAndPrintsFileLineColumnForABrokenFile) {
  writeFile(config_, conf(kBroken));

  EXPECT_EQ(runToExit({"--check-config", "--config", config_}), 1);

  std::string err = readAll(stderr_path_);
  EXPECT_TRUE(contains(err, config_ + ":9:12: node.priority is a string; it must be an integer"))
      << err;
}

TEST_F(TandemdProcessTest, WithoutForegroundItDaemonizesAndReportsItsPid) {
  // Become the reaper of the daemon the launcher leaves behind, so it can be waited for.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  struct ResetSubreaper {
    ~ResetSubreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
  } reset;

  pid_t launcher = spawn({"--config", config_});
  auto ready = receiveLine("READY=1");
  ASSERT_TRUE(ready) << readAll(stderr_path_);
  EXPECT_EQ(waitExit(launcher, Clock::now() + kPatience), 0)
      << "the launcher exits 0 once the daemon is ready";
  auto mainpid = valueOf(*ready, "MAINPID");
  ASSERT_TRUE(mainpid);
  pid_t daemon_pid = std::stoi(*mainpid);
  EXPECT_NE(daemon_pid, launcher);
  started_.push_back(daemon_pid);
  EXPECT_TRUE(alive(daemon_pid));

  ASSERT_EQ(::kill(daemon_pid, SIGTERM), 0);
  EXPECT_TRUE(receiveLine("STOPPING=1"));
  EXPECT_EQ(waitExit(daemon_pid, Clock::now() + kPatience), 0);
}

TEST_F(TandemdProcessTest, WithoutForegroundAnInvalidConfigMakesTheLauncherExitOne) {
  writeFile(config_, conf(kBroken));

  EXPECT_EQ(runToExit({"--config", config_}), 1);

  std::string log = readAll(stderr_path_);
  EXPECT_TRUE(contains(log, config_ + ":9:12: ")) << log;
}

}  // namespace
