#include "cpg_peer.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <string>

#include "corosync/cpg_bus.h"
#include "loop/qb_dispatcher.h"

namespace tandem::corosync::test {

namespace {

void emit(const std::string& line) {
  std::string out = line + "\n";
  // Small lines into a pipe the test drains: a blocking write is fine in the peer.
  (void)!::write(STDOUT_FILENO, out.data(), out.size());
}

std::string member(uint32_t nodeid, uint32_t pid) {
  return std::to_string(nodeid) + " " + std::to_string(pid);
}

class PeerListener final : public GroupBusListener {
 public:
  void onMessage(uint32_t nodeid, uint32_t pid, std::span<const uint8_t> bytes) override {
    emit("msg " + member(nodeid, pid) + " " + std::string(bytes.begin(), bytes.end()));
  }
  void onGroupChange(const GroupChange& change) override {
    for (const auto& j : change.joined) {
      emit("joined " + member(j.member.nodeid, j.member.pid) + " " +
           std::string(changeReasonName(j.reason)));
      if (j.member.pid == static_cast<uint32_t>(::getpid())) emit("ready");
    }
    for (const auto& l : change.left) {
      emit("left " + member(l.member.nodeid, l.member.pid) + " " +
           std::string(changeReasonName(l.reason)));
    }
  }
  void onMembership(const RingMembership& ring) override {
    emit("ring " + std::to_string(ring.ring_seq) + " " + std::to_string(ring.nodeids.size()));
  }
  void onConnected() override {
    emit("connected " +
         member(bus ? bus->localNodeId().value_or(0) : 0, static_cast<uint32_t>(::getpid())));
  }
  void onConnectionLost(const Error& cause, size_t discarded) override {
    emit("lost " + std::to_string(discarded) + " " + cause.message);
  }
  void onConnectFailed(const Error& cause, Millis) override {
    emit("connect-failed " + cause.message);
  }

  const GroupBus* bus = nullptr;  // set once created; callbacks only come from the loop after
};

}  // namespace

int runCpgPeer(const std::string& group) {
  auto dispatcher = loop::QbDispatcher::create();
  if (!dispatcher) {
    emit("error " + dispatcher.error().message);
    return 2;
  }
  PeerListener listener;
  auto bus = CpgBus::create(**dispatcher, listener, group);
  if (!bus) {
    emit("error " + bus.error().message);
    return 2;
  }
  std::unique_ptr<CpgBus> live = std::move(*bus);
  listener.bus = live.get();
  std::string input;
  auto watch =
      (*dispatcher)->watchFd(STDIN_FILENO, loop::FdEvents{true, false}, [&](loop::FdEvents) {
        char buf[4096];
        ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n <= 0) {
          (*dispatcher)->stop();  // the test went away
          return;
        }
        input.append(buf, static_cast<size_t>(n));
        for (size_t nl; (nl = input.find('\n')) != std::string::npos;) {
          std::string line = input.substr(0, nl);
          input.erase(0, nl + 1);
          if (line.rfind("send ", 0) == 0 && live) {
            std::string text = line.substr(5);
            auto r = live->send(std::span<const uint8_t>(
                reinterpret_cast<const uint8_t*>(text.data()), text.size()));
            if (!r) emit("send-failed " + r.error().message);
          } else if (line == "quit") {
            listener.bus = nullptr;
            live.reset();
            emit("bye");
            (*dispatcher)->stop();
            return;
          }
        }
      });
  if (!watch) {
    emit("error " + watch.error().message);
    return 2;
  }
  (*dispatcher)->run();
  return 0;
}

Result<std::unique_ptr<PeerProcess>> PeerProcess::spawn(loop::Dispatcher& dispatcher,
                                                        const std::string& group) {
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return fail(errnoError(errno, "pipe2"));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(in[0]);
    ::close(in[1]);
    return fail(errnoError(err, "pipe2"));
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    return fail(errnoError(err, "fork"));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(in[0], STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    std::string flag(kPeerFlag);
    ::execl("/proc/self/exe", "corosync_component_tests", flag.c_str(), group.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::fcntl(out[0], F_SETFL, ::fcntl(out[0], F_GETFL) | O_NONBLOCK);
  std::unique_ptr<PeerProcess> peer(new PeerProcess(pid, in[1], out[0]));
  auto watch = dispatcher.watchFd(out[0], loop::FdEvents{true, false},
                                  [p = peer.get()](loop::FdEvents) { p->onReadable(); });
  if (!watch) return fail(watch.error());
  peer->watch_ = std::move(*watch);
  return peer;
}

PeerProcess::PeerProcess(pid_t pid, int to_child, int from_child)
    : pid_(pid), to_child_(to_child), from_child_(from_child) {}

PeerProcess::~PeerProcess() {
  watch_.reset();
  if (!exit_status_) {
    (void)kill(SIGKILL);
    int status = 0;
    (void)::waitpid(pid_, &status, 0);
  }
  ::close(to_child_);
  ::close(from_child_);
}

Result<void> PeerProcess::command(std::string_view line) {
  std::string out = std::string(line) + "\n";
  if (::write(to_child_, out.data(), out.size()) != static_cast<ssize_t>(out.size())) {
    return fail(errnoError(errno, "write to peer"));
  }
  return {};
}

void PeerProcess::onReadable() {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(from_child_, buf, sizeof buf);
    if (n <= 0) {
      // EOF: the peer exited; stop watching a pipe that would stay readable forever.
      if (n == 0) watch_.reset();
      return;
    }
    partial_.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
      lines_.push_back(partial_.substr(0, nl));
      partial_.erase(0, nl + 1);
    }
  }
}

bool PeerProcess::saw(std::string_view line_prefix) const { return count(line_prefix) > 0; }

size_t PeerProcess::count(std::string_view line_prefix) const {
  size_t n = 0;
  for (const auto& l : lines_) n += l.rfind(line_prefix, 0) == 0 ? 1 : 0;
  return n;
}

bool PeerProcess::kill(int sig) { return !exit_status_ && ::kill(pid_, sig) == 0; }

bool PeerProcess::tryReap() {
  if (exit_status_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  exit_status_ = status;
  return true;
}

}  // namespace tandem::corosync::test
