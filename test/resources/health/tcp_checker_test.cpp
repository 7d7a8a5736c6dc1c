// The tcp checker against real sockets on loopback, on the libqb loop: a listener is healthy, a
// closed port is refused at once, a listener whose accept queue is full times out, tcp_reset
// closes with a reset the server sees, and IPv6 works alike. A guard timer fails a test whose
// probe never ends.
#include "health/tcp_checker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "resources/health/real_loop_test.h"

namespace tandem::resources::health {
namespace {

using namespace std::chrono_literals;
using test::kCheckTimeout;
using test::kLoadMargin;

using Listener = test::LoopbackListener;

class TcpCheckerTest : public test::RealLoopTest {
 protected:
  ProbeResult run(TcpChecker& checker, const Endpoint& at, Millis timeout = kCheckTimeout,
                  bool reset = false) {
    ProbeTarget t;
    t.address = at;
    t.check.type = config::CheckType::kTcp;
    t.check.timeout = timeout;
    t.check.tcp_reset = reset;
    return probeOnce(checker, t);
  }
};

TEST_F(TcpCheckerTest, AListenerIsHealthy) {
  Listener l(Family::kInet);
  TcpChecker c(*loop_);
  ProbeResult r = run(c, l.endpoint);
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "connected");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout";
}

TEST_F(TcpCheckerTest, AClosedPortIsRefused) {
  uint16_t port = 0;
  {
    Listener gone(Family::kInet);
    port = gone.port;
  }
  TcpChecker c(*loop_);
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
  TcpChecker c(*loop_);
  ProbeResult r = run(c, l.endpoint, 200ms);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "timed out after 200 ms");
  EXPECT_GE(r.took, 200ms);
  EXPECT_LT(r.took, 200ms + kLoadMargin) << "check.timeout (200 ms) and the load margin";
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
  TcpChecker c(*loop_);
  ASSERT_TRUE(run(c, l.endpoint, 1000ms, true).ok);
  EXPECT_EQ(serverSees(l.fd), -ECONNRESET);
  ASSERT_TRUE(run(c, l.endpoint, 1000ms, false).ok);
  EXPECT_EQ(serverSees(l.fd), 0) << "without tcp_reset: an orderly FIN";
}

TEST_F(TcpCheckerTest, AProbeLeavesFromTheSourceAddress) {
  Listener l(Family::kInet);
  TcpChecker c(*loop_);
  ProbeTarget t;
  t.address = l.endpoint;
  t.check.source_address = *IpAddress::parse("127.0.0.2");  // on lo like all of 127/8
  ASSERT_TRUE(probeOnce(c, t).ok);
  sockaddr_in peer{};
  socklen_t len = sizeof peer;
  int fd = ::accept4(l.fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
  ASSERT_GE(fd, 0);
  ::close(fd);
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &peer.sin_addr, text, sizeof text);
  EXPECT_STREQ(text, "127.0.0.2");
}

TEST_F(TcpCheckerTest, ASourceAddressNotOnThisHostFailsTheProbeSayingSo) {
  Listener l(Family::kInet);
  TcpChecker c(*loop_);
  ProbeTarget t;
  t.address = l.endpoint;
  t.check.source_address = *IpAddress::parse("198.51.100.254");
  ProbeResult r = probeOnce(c, t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "cannot bind to 198.51.100.254: cannot assign requested address");
}

TEST_F(TcpCheckerTest, Ipv6WorksAlike) {
  Listener l(Family::kInet6);
  TcpChecker c(*loop_);
  ProbeResult r = run(c, l.endpoint);
  EXPECT_TRUE(r.ok) << r.reason;
}

TEST_F(TcpCheckerTest, CancelAbandonsTheProbeWithoutCallingBack) {
  Listener l(Family::kInet, 0);
  TcpChecker c(*loop_);
  ProbeTarget t;
  t.address = l.endpoint;
  t.check.timeout = 50ms;
  bool called = false;
  c.probe(t, [&](ProbeResult) { called = true; });
  c.cancel();
  auto stop = loop_->createTimer([this] { loop_->stop(); });
  stop->arm(100ms);
  loop_->run();
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace tandem::resources::health
