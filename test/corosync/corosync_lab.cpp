#include "corosync_lab.h"

#include <corosync/cpg.h>
#include <dirent.h>
#include <fcntl.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace tandem::corosync::test {

namespace {

constexpr const char* kLabDir = "/run/tandem-corosync-test";

// What a failed namespace or mount call means here: not allowed is a reason to skip.
Error setupError(int err, const std::string& what) {
  Error e = errnoError(err, what);
  if (err == EPERM || err == EACCES || err == ENOSYS || err == EINVAL) {
    e.code = ErrorCode::kPermissionDenied;
  }
  return e;
}

Result<void> mountTmpfs(const char* path, const char* options) {
  struct stat st {};
  // Only over directories that exist: the test never creates paths on the host's filesystem.
  if (::stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
    return fail(ErrorCode::kNotFound,
                std::string(path) + " does not exist (is corosync installed?)");
  }
  if (::mount("tandem-test", path, "tmpfs", MS_NOSUID | MS_NODEV, options) != 0) {
    return fail(setupError(errno, std::string("mount tmpfs on ") + path));
  }
  return {};
}

Result<void> bringLoopbackUp() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail(errnoError(errno, "socket"));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  int rc = ::ioctl(s, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    rc = ::ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  int err = errno;
  ::close(s);
  if (rc != 0) return fail(errnoError(err, "bring lo up"));
  return {};
}

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

bool processExists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

// A CPG client can connect and ask for its node id: the engine serves clients.
bool cpgAnswers() {
  cpg_handle_t handle = 0;
  cpg_callbacks_t callbacks{};
  if (cpg_initialize(&handle, &callbacks) != CS_OK) return false;
  int fd = -1;
  unsigned int nodeid = 0;
  bool ok = cpg_fd_get(handle, &fd) == CS_OK && cpg_local_get(handle, &nodeid) == CS_OK;
  (void)cpg_finalize(handle);
  return ok;
}

}  // namespace

std::optional<std::string> labUnavailableReason() {
  if (::geteuid() != 0) return "needs root (network and mount namespaces, corosync)";
  if (!executable("/usr/sbin/corosync")) {
    return "corosync is not installed (/usr/sbin/corosync; Debian: apt-get install corosync)";
  }
  return std::nullopt;
}

Result<void> enterPrivateNamespaces() {
  if (::unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) {
    return fail(setupError(errno, "unshare(CLONE_NEWNET|CLONE_NEWNS)"));
  }
  // Nothing mounted from here on may propagate back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return fail(setupError(errno, "make / private"));
  }
  // /run for corosync's compiled-in pid file, /dev/shm for libqb's rings (the blackbox alone
  // is 8 MiB), and corosync's fixed state and log directories.
  if (auto r = mountTmpfs("/run", "mode=0755,size=16m"); !r) return r;
  if (auto r = mountTmpfs("/dev/shm", "mode=1777,size=256m"); !r) return r;
  if (auto r = mountTmpfs("/var/lib/corosync", "mode=0700,size=16m"); !r) return r;
  if (auto r = mountTmpfs("/var/log/corosync", "mode=0700,size=16m"); !r) return r;
  if (::mkdir(kLabDir, 0755) != 0) return fail(errnoError(errno, std::string("mkdir ") + kLabDir));
  return bringLoopbackUp();
}

CorosyncLab::CorosyncLab(std::string corosync_binary)
    : binary_(std::move(corosync_binary)), dir_(kLabDir) {}

CorosyncLab::~CorosyncLab() { stop(Millis(10'000)); }

Result<void> CorosyncLab::writeConfig() {
  std::ofstream out(dir_ + "/corosync.conf");
  // knet on lo, crypto off (nothing leaves the namespace), votequorum with one vote.
  out << "totem {\n"
         "  version: 2\n"
         "  cluster_name: tandem-test\n"
         "  transport: knet\n"
         "  crypto_cipher: none\n"
         "  crypto_hash: none\n"
         "  token: "
      << kTokenMs
      << "\n"
         "}\n"
         "nodelist {\n"
         "  node {\n"
         "    name: "
      << kNodeName
      << "\n"
         "    nodeid: "
      << kNodeId
      << "\n"
         "    ring0_addr: 127.0.0.1\n"
         "  }\n"
         "}\n"
         "quorum {\n"
         "  provider: corosync_votequorum\n"
         "  expected_votes: 1\n"
         "}\n"
         "logging {\n"
         "  to_logfile: yes\n"
         "  logfile: "
      << dir_
      << "/corosync.log\n"
         "  to_syslog: no\n"
         "  to_stderr: no\n"
         "  timestamp: on\n"
         "}\n"
         "system {\n"
         "  move_to_root_cgroup: no\n"
         "  state_dir: /var/lib/corosync\n"
         "}\n";
  out.close();
  if (!out) return fail(ErrorCode::kIo, "cannot write " + dir_ + "/corosync.conf");
  config_written_ = true;
  return {};
}

Result<void> CorosyncLab::start(Millis ready_timeout) {
  if (pid_ > 0) return fail(ErrorCode::kAlreadyExists, "corosync already runs");
  if (!config_written_) {
    if (auto r = writeConfig(); !r) return r;
  }
  removeStaleShm();
  std::string conf = dir_ + "/corosync.conf";
  std::string out_path = dir_ + "/corosync.stdout";
  int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return fail(errnoError(errno, "open " + out_path));
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(out);
    return fail(errnoError(err, "fork"));
  }
  if (pid == 0) {
    // Dies with the test, whatever way the test ends.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    ::execl(binary_.c_str(), "corosync", "-f", "-c", conf.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out);
  pid_ = pid;

  auto deadline = std::chrono::steady_clock::now() + ready_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (tryReap()) {
      return fail(ErrorCode::kUnavailable, "corosync exited during start-up:\n" + logTail(20));
    }
    if (cpgAnswers()) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a poll interval, not a wait
  }
  return fail(ErrorCode::kTimeout, "corosync did not serve CPG clients within " +
                                       std::to_string(ready_timeout.count()) + " ms:\n" +
                                       logTail(20));
}

bool CorosyncLab::signal(int sig) {
  if (pid_ <= 0) return false;
  return ::kill(pid_, sig) == 0;
}

bool CorosyncLab::tryReap() {
  if (pid_ <= 0) return true;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    pid_ = -1;
    return true;
  }
  return false;
}

void CorosyncLab::stop(Millis grace) {
  if (pid_ <= 0) return;
  (void)signal(SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (!tryReap()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      (void)signal(SIGKILL);
      int status = 0;
      (void)::waitpid(pid_, &status, 0);
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string CorosyncLab::logTail(size_t lines) const {
  std::ifstream in(dir_ + "/corosync.log");
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (tail.size() > lines) tail.pop_front();
  }
  std::ostringstream out;
  for (const auto& l : tail) out << "  " << l << "\n";
  return out.str();
}

void CorosyncLab::removeStaleShm() const {
  DIR* d = ::opendir("/dev/shm");
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("qb-", 0) != 0) continue;
    // The first two numbers in the name are the pids involved (server, client).
    std::istringstream parts(name.substr(3));
    int checked = 0;
    for (std::string part; checked < 2 && std::getline(parts, part, '-');) {
      if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) continue;
      ++checked;
      if (!processExists(static_cast<pid_t>(std::stol(part)))) {
        stale.push_back(name);
        break;
      }
    }
  }
  ::closedir(d);
  for (const auto& name : stale) (void)::unlink(("/dev/shm/" + name).c_str());
}

}  // namespace tandem::corosync::test
