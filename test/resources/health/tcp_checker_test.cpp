// The tcp checker against real sockets on loopback, on the libqb loop: a listener is healthy, a
// closed port is refused at once, a listener whose accept queue is full times out, tcp_reset
// closes with a reset the server sees, and IPv6 works alike. A guard timer fails a test whose
// probe never ends.
#include "health/tcp_checker.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "resources/health/probe_loop.h"

namespace tandem::resources::health {
namespace {

using namespace std::chrono_literals;

// A listening socket on the loopback address of family, on a port the kernel picks.
struct Listener {
  explicit Listener(Family family, int backlog = 16) {
    fd = ::socket(family == Family::kInet ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd, 0);
    sockaddr_storage sa{};
    socklen_t len = 0;
    if (family == Family::kInet) {
      auto* in = reinterpret_cast<sockaddr_in*>(&sa);
      in->sin_family = AF_INET;
      in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      len = sizeof(sockaddr_in);
    } else {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&sa);
      in6->sin6_family = AF_INET6;
      in6->sin6_addr = in6addr_loopback;
      len = sizeof(sockaddr_in6);
    }
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), len), 0) << std::strerror(errno);
    EXPECT_EQ(::listen(fd, backlog), 0);
    EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
    port = ntohs(family == Family::kInet ? reinterpret_cast<sockaddr_in*>(&sa)->sin_port
                                         : reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port);
    endpoint.address = *IpAddress::parse(family == Family::kInet ? "127.0.0.1" : "::1");
    endpoint.port = port;
  }
  ~Listener() {
    if (fd >= 0) ::close(fd);
  }
  int fd = -1;
  uint16_t port = 0;
  Endpoint endpoint;
};

class TcpCheckerTest : public ::testing::Test {
 protected:
  ProbeResult run(TcpChecker& checker, const Endpoint& at, Millis timeout = 1000ms,
                  bool reset = false) {
    ProbeTarget t;
    t.address = at;
    t.check.type = config::CheckType::kTcp;
    t.check.timeout = timeout;
    t.check.tcp_reset = reset;
    return loop_.probe(checker, t, 5s);
  }

  ProbeLoop loop_;
  loop::QbDispatcher* loop() { return &loop_.dispatcher(); }
};

TEST_F(TcpCheckerTest, AListenerIsHealthy) {
  Listener l(Family::kInet);
  TcpChecker c(*loop());
  ProbeResult r = run(c, l.endpoint);
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "connected");
  EXPECT_LT(r.took, 1000ms);
}

TEST_F(TcpCheckerTest, AClosedPortIsRefused) {
  uint16_t port = 0;
  {
    Listener gone(Family::kInet);
    port = gone.port;
  }
  TcpChecker c(*loop());
  Endpoint at = *Endpoint::parse("127.0.0.1:" + std::to_string(port), false);
  ProbeResult r = run(c, at);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "connection refused");
}

TEST_F(TcpCheckerTest, AListenerWhoseQueueIsFullTimesOut) {
  // backlog 0: the kernel queues one connection; the SYNs after that are dropped.
  Listener l(Family::kInet, 0);
  std::vector<int> fillers;
  for (int i = 0; i < 3; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(l.port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    fillers.push_back(fd);
  }
  TcpChecker c(*loop());
  ProbeResult r = run(c, l.endpoint, 200ms);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "timed out after 200 ms");
  EXPECT_GE(r.took, 200ms);
  EXPECT_LT(r.took, 1000ms);
  for (int fd : fillers) ::close(fd);
}

// What the real server's side of the probe saw when the checker closed: 0 (a FIN) or -errno.
int serverSees(int listener) {
  int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  EXPECT_GE(fd, 0);
  char b;
  ssize_t n = ::recv(fd, &b, 1, 0);
  const int result = n < 0 ? -errno : static_cast<int>(n);
  ::close(fd);
  return result;
}

TEST_F(TcpCheckerTest, TcpResetClosesWithAResetTheServerSees) {
  Listener l(Family::kInet);
  TcpChecker c(*loop());
  ASSERT_TRUE(run(c, l.endpoint, 1000ms, true).ok);
  EXPECT_EQ(serverSees(l.fd), -ECONNRESET);
  ASSERT_TRUE(run(c, l.endpoint, 1000ms, false).ok);
  EXPECT_EQ(serverSees(l.fd), 0) << "without tcp_reset: an orderly FIN";
}

TEST_F(TcpCheckerTest, Ipv6WorksAlike) {
  Listener l(Family::kInet6);
  TcpChecker c(*loop());
  ProbeResult r = run(c, l.endpoint);
  EXPECT_TRUE(r.ok) << r.reason;
}

TEST_F(TcpCheckerTest, CancelAbandonsTheProbeWithoutCallingBack) {
  Listener l(Family::kInet, 0);
  TcpChecker c(*loop());
  ProbeTarget t;
  t.address = l.endpoint;
  t.check.timeout = 50ms;
  bool called = false;
  c.probe(t, [&](ProbeResult) { called = true; });
  c.cancel();
  auto stop = loop()->createTimer([this] { loop()->stop(); });
  stop->arm(100ms);
  loop()->run();
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace tandem::resources::health
