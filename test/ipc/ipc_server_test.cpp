// The real IpcServer on the real QbDispatcher in a child process, and the real client (and a
// raw libqb client for garbage) in the test process or in children that drop root. Each
// server gets its own ipc name, so tests may run in parallel.
#include "ipc/ipc_server.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <qb/qbipcc.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ipc/posix_user_db.h"
#include "ipc_client.h"
#include "loop/qb_dispatcher.h"

// Present when built with -fsanitize=address: lets the server child, which leaves through
// _exit, still have its leaks checked.
extern "C" void __lsan_do_leak_check()  // NOLINT: the sanitizer runtime's name
    __attribute__((weak));

namespace tandem::ipc {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr uid_t kNobody = 65534;
constexpr gid_t kNoGroup = 65534;

// Counts the changes that reached it, and reports them (and the server's open connections) in
// its status, so the test process can see inside the server process.
class CountingHandler final : public AdminHandler {
 public:
  json status() override {
    return {{"cluster", "prod"},
            {"local_node", "lb1"},
            {"changes", changes_},
            {"connections", server ? server->connections() : 0}};
  }
  Result<json> standby(const StandbyArgs& args) override {
    ++changes_;
    return json{{"node", args.node}, {"standby", args.on}};
  }
  Result<json> move(const MoveArgs& args) override {
    ++changes_;
    return json{{"target", args.target}};
  }
  Result<json> clear() override { return json::object(); }
  Result<json> reload() override { return json::object(); }

  const IpcServer* server = nullptr;

 private:
  int changes_ = 0;
};

void writeAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string readAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

// The server process: reports "ok" or the error on ready_fd, then serves until SIGTERM.
[[noreturn]] void serve(const std::string& name, const std::string& group, int ready_fd) {
  auto dispatcher = loop::QbDispatcher::create();
  if (!dispatcher) {
    writeAll(ready_fd, "error: " + dispatcher.error().message);
    ::_exit(10);
  }
  CountingHandler handler;
  PosixUserDb users;
  // Half-open connections: shorter than tandemd's 5 s so the test does not wait for them,
  // long enough for a real client under ASan to authenticate.
  IpcServerOptions options{name, group,
                           [](std::string_view line) {
                             std::fprintf(stderr, "server audit: %.*s\n",
                                          static_cast<int>(line.size()), line.data());
                           },
                           AuthLimits{Millis(1500), 8}};
  auto server = IpcServer::create(**dispatcher, handler, users, std::move(options));
  if (!server) {
    writeAll(ready_fd, "error: " + server.error().message);
    ::_exit(11);
  }
  handler.server = server->get();
  auto term = (*dispatcher)->onSignal(loop::Signal::kTerminate, [&] { (*dispatcher)->stop(); });
  if (!term) ::_exit(12);
  writeAll(ready_fd, "ok");
  ::close(ready_fd);
  (*dispatcher)->run();
  server->reset();
  term->reset();
  dispatcher->reset();
  if (__lsan_do_leak_check != nullptr) __lsan_do_leak_check();
  ::_exit(0);
}

struct ServerProcess {
  pid_t pid = -1;
  std::string startup;  // "ok" or "error: ..."
};

ServerProcess startServer(const std::string& name, const std::string& group) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    serve(name, group, fds[1]);
  }
  ::close(fds[1]);
  ServerProcess p{pid, readAll(fds[0])};
  ::close(fds[0]);
  return p;
}

// Runs callDaemon in a child that has dropped to uid/gid; returns its answer as JSON, or
// {"transport_error": message}.
json askAs(uid_t uid, gid_t gid, const std::string& name, RequestId id, const json& body) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(20);
    auto r = cli::callDaemon(cli::IpcOptions{name, Millis(5000)}, id, body);
    writeAll(fds[1], r ? r->dump() : json{{"transport_error", r.error().message}}.dump());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text = readAll(fds[0]);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "client child status " << status;
  return json::parse(text, nullptr, false);
}

// A child as uid/gid opens `count` raw connections and keeps them open until `release` is
// closed by the test; returns how many the server accepted, and the child's pid.
struct HeldConnections {
  pid_t pid = -1;
  int accepted = -1;
  int release = -1;  // close it to let the child go
  void letGo() {
    if (release >= 0) ::close(release);
    release = -1;
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    pid = -1;
  }
};
HeldConnections holdAs(uid_t uid, gid_t gid, const std::string& name, int count) {
  int out[2], hold[2];
  EXPECT_EQ(::pipe(out), 0);
  EXPECT_EQ(::pipe(hold), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(out[0]);
    ::close(hold[1]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(20);
    std::vector<qb_ipcc_connection_t*> open;
    for (int i = 0; i < count; ++i) {
      if (qb_ipcc_connection_t* c = qb_ipcc_connect(name.c_str(), kMaxMessageSize)) {
        open.push_back(c);
      }
    }
    writeAll(out[1], std::to_string(open.size()));
    ::close(out[1]);
    char byte;
    while (::read(hold[0], &byte, 1) > 0) {
    }
    for (auto* c : open) qb_ipcc_disconnect(c);
    ::_exit(0);
  }
  ::close(out[1]);
  ::close(hold[0]);
  HeldConnections h;
  h.pid = pid;
  h.release = hold[1];
  std::string text = readAll(out[0]);
  ::close(out[0]);
  h.accepted = text.empty() ? -1 : std::stoi(text);
  return h;
}

class IpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run clients as nobody";
    static int counter = 0;
    name_ = "tandem-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  }

  void start(const std::string& group = "root") {
    server_ = startServer(name_, group);
    ASSERT_EQ(server_.startup, "ok");
  }

  void TearDown() override {
    if (server_.pid <= 0) return;
    if (server_.startup == "ok") ::kill(server_.pid, SIGTERM);
    int status = 0;
    ASSERT_EQ(::waitpid(server_.pid, &status, 0), server_.pid);
    if (server_.startup == "ok") {
      EXPECT_TRUE(WIFEXITED(status)) << "the server died of signal " << WTERMSIG(status);
      EXPECT_EQ(WEXITSTATUS(status), 0);
    }
  }

  Result<json> ask(RequestId id, const json& body = json::object(), Millis timeout = 5000ms) {
    return cli::callDaemon(cli::IpcOptions{name_, timeout}, id, body);
  }

  bool serverAlive() const { return ::waitpid(server_.pid, nullptr, WNOHANG) == 0; }

  // A raw libqb client, for bytes callDaemon would never send.
  struct RawClient {
    explicit RawClient(const std::string& name)
        : c(qb_ipcc_connect(name.c_str(), kMaxMessageSize)) {}
    ~RawClient() {
      if (c) qb_ipcc_disconnect(c);
    }
    // Sends bytes as they are; returns the decoded answer, or the errno of recv.
    Result<json> exchange(const Bytes& bytes, int32_t expect_id, int32_t timeout_ms = 2000) {
      ssize_t sent = qb_ipcc_send(c, bytes.data(), bytes.size());
      if (sent < 0) return fail(errnoError(static_cast<int>(-sent), "send"));
      Bytes buffer(kMaxMessageSize);
      ssize_t n = qb_ipcc_recv(c, buffer.data(), buffer.size(), timeout_ms);
      if (n < 0) return fail(errnoError(static_cast<int>(-n), "recv"));
      buffer.resize(static_cast<size_t>(n));
      return decodeResponse(buffer, expect_id);
    }
    qb_ipcc_connection_t* c;
  };

  static Bytes header(int32_t id, int32_t size, std::string_view body) {
    Bytes out(kRequestHeaderSize + body.size(), 0);
    std::memcpy(out.data(), &id, 4);
    std::memcpy(out.data() + 8, &size, 4);
    std::memcpy(out.data() + kRequestHeaderSize, body.data(), body.size());
    return out;
  }

  std::string name_;
  ServerProcess server_;
};

TEST_F(IpcServerTest, StatusRoundTripsToAnyUser) {
  start();
  auto r = ask(RequestId::kStatus);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)["ok"], true);
  EXPECT_EQ((*r)["cluster"], "prod");
  json as_nobody = askAs(kNobody, kNoGroup, name_, RequestId::kStatus, json::object());
  EXPECT_EQ(as_nobody["ok"], true) << as_nobody;
  EXPECT_EQ(as_nobody["local_node"], "lb1");
}

TEST_F(IpcServerTest, ChangeFromANonRootUserOutsideTheGroupIsRefused) {
  start("root");
  json refused = askAs(kNobody, kNoGroup, name_, RequestId::kStandby,
                       standbyBody({"lb1", true, std::nullopt}));
  EXPECT_EQ(refused["ok"], false) << refused;
  EXPECT_EQ(refused["code"], "permission-denied");
  EXPECT_NE(refused["error"].get<std::string>().find(
                "permission denied: user nobody (uid 65534) is not root and not in group root"),
            std::string::npos)
      << refused;
  auto status = ask(RequestId::kStatus);
  ASSERT_TRUE(status.has_value()) << status.error().message;
  EXPECT_EQ((*status)["changes"], 0) << "the refused request must not reach the handler";

  auto allowed = ask(RequestId::kStandby, standbyBody({"lb1", true, std::nullopt}));
  ASSERT_TRUE(allowed.has_value()) << allowed.error().message;
  EXPECT_EQ(*allowed, (json{{"ok", true}, {"node", "lb1"}, {"standby", true}}));
  EXPECT_EQ((*ask(RequestId::kStatus))["changes"], 1);
}

TEST_F(IpcServerTest, ChangeFromAMemberOfTheGroupIsAllowed) {
  start("nogroup");
  json moved = askAs(kNobody, kNoGroup, name_, RequestId::kMove, moveBody({"lb2", std::nullopt}));
  EXPECT_EQ(moved, (json{{"ok", true}, {"target", "lb2"}}));
}

TEST_F(IpcServerTest, GarbageGetsErrorAnswersAndTheServerKeepsServing) {
  start();
  {
    RawClient raw(name_);
    ASSERT_NE(raw.c, nullptr) << std::strerror(errno);
    auto non_json = raw.exchange(header(1, 16 + 7, "garbage"), 1);
    ASSERT_TRUE(non_json.has_value()) << non_json.error().message;
    EXPECT_EQ((*non_json)["error"], "the request body is not valid JSON (syntax error at byte 1)");

    // The header claims more than was sent: libqb hands over its buffer's stale zeros.
    auto overstated = raw.exchange(header(1, 1000, "{}"), 1);
    ASSERT_TRUE(overstated.has_value()) << overstated.error().message;
    EXPECT_EQ((*overstated)["ok"], false);

    auto negative = raw.exchange(header(1, -5, "{}"), 1);
    ASSERT_TRUE(negative.has_value()) << negative.error().message;
    EXPECT_EQ((*negative)["error"], "bad request size -5: smaller than its 16-byte header");

    auto huge = raw.exchange(header(1, 0x7fffffff, "{}"), 1);
    ASSERT_TRUE(huge.has_value()) << huge.error().message;
    EXPECT_EQ((*huge)["error"], "a request of 2147483647 bytes; the largest is 4096");

    auto unknown = raw.exchange(header(42, 18, "{}"), 42);
    ASSERT_TRUE(unknown.has_value()) << unknown.error().message;
    EXPECT_NE((*unknown)["error"].get<std::string>().find("unknown request id 42"),
              std::string::npos);

    auto wrong_type =
        raw.exchange(*encodeRequest(RequestId::kStandby, json{{"node", 1}, {"on", true}}), 2);
    ASSERT_TRUE(wrong_type.has_value()) << wrong_type.error().message;
    EXPECT_EQ((*wrong_type)["code"], "invalid-argument");

    auto still_fine = raw.exchange(*encodeRequest(RequestId::kStatus, json::object()), 1);
    ASSERT_TRUE(still_fine.has_value()) << still_fine.error().message;
    EXPECT_EQ((*still_fine)["ok"], true) << "the same connection still works after garbage";
  }
  {
    // Shorter than a header: libqb drops the message (and stops reading this connection)
    // without calling us, so there is no answer, but nothing else is affected.
    RawClient raw(name_);
    ASSERT_NE(raw.c, nullptr);
    EXPECT_FALSE(raw.exchange(Bytes{1, 2, 3, 4}, 1, 300).has_value());
  }
  auto r = ask(RequestId::kStatus);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)["ok"], true);
  EXPECT_TRUE(serverAlive());
}

TEST_F(IpcServerTest, ClosedConnectionsAreForgotten) {
  start();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ask(RequestId::kStatus).has_value());
  // The server notices each hang-up on its own turn of the loop; give it a moment.
  json status;
  for (int i = 0; i < 100; ++i) {
    status = *ask(RequestId::kStatus);
    if (status["connections"] == 1) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(status["connections"], 1) << "only the asking connection is open";
}

TEST_F(IpcServerTest, ConnectionsBeyondTheLimitAreRefusedUntilOthersClose) {
  start();
  std::vector<std::unique_ptr<RawClient>> open;
  for (size_t i = 0; i < IpcServer::kMaxConnections; ++i) {
    open.push_back(std::make_unique<RawClient>(name_));
    ASSERT_NE(open.back()->c, nullptr) << "connection " << i << ": " << std::strerror(errno);
  }
  auto refused = ask(RequestId::kStatus);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kTryAgain);
  EXPECT_NE(refused.error().message.find("too many admin connections"), std::string::npos)
      << refused.error().message;
  open.clear();
  Result<json> after = fail(ErrorCode::kTryAgain, "not asked yet");
  for (int i = 0; i < 100 && !after; ++i) {
    std::this_thread::sleep_for(10ms);
    after = ask(RequestId::kStatus);
  }
  ASSERT_TRUE(after.has_value()) << after.error().message;
  EXPECT_EQ((*after)["ok"], true);
}

TEST_F(IpcServerTest, OneUserHoldsAtMostEightConnectionsAndRootStillGetsIn) {
  start();
  HeldConnections nobody = holdAs(kNobody, kNoGroup, name_, 20);
  EXPECT_EQ(nobody.accepted, static_cast<int>(IpcServer::kLimits.per_user));
  auto status = ask(RequestId::kStatus);
  ASSERT_TRUE(status.has_value()) << status.error().message;
  EXPECT_EQ((*status)["connections"], IpcServer::kLimits.per_user + 1);
  nobody.letGo();
}

TEST_F(IpcServerTest, ClientWithoutADaemonSaysWhereItLooked) {
  auto r = cli::callDaemon(cli::IpcOptions{name_ + "-absent", Millis(1000)}, RequestId::kStatus,
                           json::object());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(r.error().message, "cannot reach tandemd (ipc name \"" + name_ +
                                   "-absent\"): is tandemd running in this network namespace?");
}

TEST_F(IpcServerTest, SecondServerWithTheSameNameIsRefused) {
  start();
  ServerProcess second = startServer(name_, "root");
  int status = 0;
  ::waitpid(second.pid, &status, 0);
  // The name is abstract, so the message says who holds it: here the first server.
  EXPECT_EQ(second.startup, "error: cannot publish the admin socket \"" + name_ +
                                "\": Address already in use; it is held by pid " +
                                std::to_string(server_.pid) +
                                " (ipc_server_test, uid 0): stop that process (or set [control] "
                                "ipc_name), then start tandemd again");
  EXPECT_TRUE(ask(RequestId::kStatus).has_value()) << "the first server is unaffected";
}

// Clients that connect and never send their credentials (libqb waits for them for ever on its
// own): beyond 8 at once the oldest are hung up, the rest at 1.5 s, and root still gets in.
TEST_F(IpcServerTest, HalfOpenConnectionsAreHungUpAndRootStillGetsIn) {
  start();
  auto fds_of = [](pid_t pid) {
    size_t n = 0;
    for (const auto& e :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
      (void)e;
      ++n;
    }
    return n;
  };
  const size_t baseline = fds_of(server_.pid);
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, name_.data(), name_.size());  // padded, as libqb binds it
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << i;
    idle.push_back(fd);
  }
  auto r = ask(RequestId::kStatus);
  EXPECT_TRUE(r.has_value()) << "root's status among 20 idle connections: " << r.error().message;
  // Every idle one is closed by the server: EOF within the timeout and a margin.
  for (int fd : idle) {
    pollfd p{fd, POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1) << "an idle connection was never hung up";
    char c = 0;
    EXPECT_EQ(::recv(fd, &c, 1, 0), 0);
    ::close(fd);
  }
  EXPECT_LE(fds_of(server_.pid), baseline + 1) << "the server's descriptors come back down";
}

// Issue 13's injection race. With libqb's socket transport the server reads a connection's
// requests from an abstract datagram socket "...-request" that it connects to its client only
// when it sends the first answer; its name is in /proc/net/unix for anyone to read. Root's
// connection is open and has sent nothing yet; another user (nobody) sends that socket a
// standby request. It must not be carried out, and root's own request still is.
TEST_F(IpcServerTest, AnotherUserCannotInjectARequestIntoRootsConnection) {
  start();
  RawClient root(name_);
  ASSERT_NE(root.c, nullptr) << std::strerror(errno);
  // The server's request sockets: "@<client>-<name>-request", NUL-padded ('@' in the table).
  std::vector<std::string> targets;
  {
    std::ifstream table("/proc/net/unix");
    std::string line;
    while (std::getline(table, line)) {
      auto at = line.find(" @");
      if (at == std::string::npos) continue;
      std::string path = line.substr(at + 2);
      path.erase(path.find_last_not_of('@') + 1);
      if (path.find(name_) != std::string::npos && path.size() > 8 &&
          path.compare(path.size() - 8, 8, "-request") == 0) {
        targets.push_back(path);
      }
    }
  }
  ASSERT_FALSE(targets.empty()) << "no request socket of " << name_ << " in /proc/net/unix";
  pid_t attacker = ::fork();
  if (attacker == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNoGroup) != 0 || ::setuid(kNobody) != 0) {
      ::_exit(20);
    }
    Bytes request = *encodeRequest(RequestId::kStandby, standbyBody({"lb1", true, std::nullopt}));
    int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    int delivered = 0;
    for (const std::string& t : targets) {
      sockaddr_un to{};
      to.sun_family = AF_UNIX;
      std::memcpy(to.sun_path + 1, t.data(), std::min(t.size(), sizeof to.sun_path - 1));
      for (int i = 0; i < 3; ++i) {
        delivered +=
            ::sendto(fd, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&to),
                     sizeof to) == static_cast<ssize_t>(request.size());
      }
    }
    ::_exit(delivered > 0 ? 0 : 21);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(attacker, &status, 0), attacker);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the attacker could not even send (exit " << WEXITSTATUS(status)
      << "): this test would prove nothing";
  // Root's own request on its connection: answered as root's, not the injected standby's.
  // (Without the defence: "the response answers request id 2, not 1": root's connection
  // answered the injected standby, and the handler counted a change.)
  auto mine = root.exchange(*encodeRequest(RequestId::kStatus, json::object()), 1);
  EXPECT_TRUE(mine.has_value()) << mine.error().message;
  auto after = ask(RequestId::kStatus);
  ASSERT_TRUE(after.has_value()) << after.error().message;
  EXPECT_EQ((*after)["changes"], 0) << "the injected standby was carried out as root's";
}

TEST_F(IpcServerTest, MissingGroupFailsTheStart) {
  server_ = startServer(name_, "no-such-group-tandem");
  EXPECT_EQ(server_.startup,
            "error: control.group \"no-such-group-tandem\": no such group; create the group or "
            "name an existing one");
}

TEST_F(IpcServerTest, HungDaemonCostsTheTimeoutNotForever) {
  start();
  ASSERT_EQ(::kill(server_.pid, SIGSTOP), 0);
  auto began = std::chrono::steady_clock::now();
  auto r = ask(RequestId::kStatus, json::object(), 300ms);
  auto took = std::chrono::steady_clock::now() - began;
  ASSERT_EQ(::kill(server_.pid, SIGCONT), 0);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kTimeout);
  EXPECT_NE(r.error().message.find("within 300 ms"), std::string::npos) << r.error().message;
  // The ask's own 300 ms timeout, and a margin for a loaded machine: a client that waited for
  // the stopped daemon would never return.
  EXPECT_LT(took, 300ms + 2700ms)
      << "the ask returned after "
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
      << " ms > its timeout 300 ms + 2,700 ms load margin";
  // The abandoned half-open connection must not hurt the server once it runs again.
  auto after = ask(RequestId::kStatus);
  ASSERT_TRUE(after.has_value()) << after.error().message;
  EXPECT_TRUE(serverAlive());
}

}  // namespace
}  // namespace tandem::ipc
