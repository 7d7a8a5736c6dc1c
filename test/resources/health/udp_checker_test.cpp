// The udp checker against a UDP server on loopback, on the libqb loop: a matching reply is
// healthy, a wrong one names what came, silence times out (or, with accept_silence, is
// healthy), a closed port fails at once on the kernel's ICMP port unreachable (with or without
// accept_silence), a long wrong reply is quoted only in part, IPv6 works alike,
// and a probe leaves from source_address. A guard timer fails a test whose probe never ends.
#include "health/udp_checker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "resources/health/real_loop_test.h"

namespace tandem::resources::health {
namespace {

using namespace std::chrono_literals;
using test::kCheckTimeout;
using test::kLoadMargin;

// A UDP server on loopback, on the test's loop: it records each datagram and its sender and
// answers each with reply, or stays silent without one.
class LoopUdpServer {
 public:
  LoopUdpServer(loop::Dispatcher& dispatcher, Family family, std::optional<std::string> reply)
      : reply_(std::move(reply)) {
    const bool v4 = family == Family::kInet;
    fd_ = ::socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0) << std::strerror(errno);
    endpoint_.address = *IpAddress::parse(v4 ? "127.0.0.1" : "::1");
    sockaddr_storage sa = toStorage(endpoint_.address, 0);
    socklen_t len = v4 ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&sa), len), 0) << std::strerror(errno);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&sa), &len), 0);
    endpoint_.port = ntohs(v4 ? reinterpret_cast<sockaddr_in*>(&sa)->sin_port
                              : reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port);
    auto watch =
        dispatcher.watchFd(fd_, loop::FdEvents{true, false}, [this](loop::FdEvents) { serve(); });
    EXPECT_TRUE(watch.has_value());
    if (watch) watch_ = std::move(*watch);
  }
  ~LoopUdpServer() {
    watch_.reset();
    if (fd_ >= 0) ::close(fd_);
  }
  LoopUdpServer(const LoopUdpServer&) = delete;
  LoopUdpServer& operator=(const LoopUdpServer&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  const std::vector<std::string>& received() const { return received_; }
  // Each datagram's source address, as text.
  const std::vector<std::string>& senders() const { return senders_; }

  static sockaddr_storage toStorage(const IpAddress& a, uint16_t port) {
    sockaddr_storage sa{};
    if (a.family == Family::kInet) {
      auto* in = reinterpret_cast<sockaddr_in*>(&sa);
      in->sin_family = AF_INET;
      in->sin_port = htons(port);
      std::memcpy(&in->sin_addr, a.bytes.data(), 4);
    } else {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&sa);
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(port);
      std::memcpy(&in6->sin6_addr, a.bytes.data(), 16);
    }
    return sa;
  }

 private:
  void serve() {
    for (;;) {
      char buf[2048];
      sockaddr_storage from{};
      socklen_t len = sizeof from;
      const ssize_t n =
          ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n < 0) return;
      received_.emplace_back(buf, static_cast<size_t>(n));
      char text[INET6_ADDRSTRLEN] = {};
      const void* addr =
          from.ss_family == AF_INET
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&from)->sin_addr)
              : &reinterpret_cast<sockaddr_in6*>(&from)->sin6_addr;
      ::inet_ntop(from.ss_family, addr, text, sizeof text);
      senders_.emplace_back(text);
      if (reply_) {
        (void)::sendto(fd_, reply_->data(), reply_->size(), 0, reinterpret_cast<sockaddr*>(&from),
                       len);
      }
    }
  }

  std::optional<std::string> reply_;
  int fd_ = -1;
  Endpoint endpoint_;
  std::unique_ptr<loop::FdWatch> watch_;
  std::vector<std::string> received_;
  std::vector<std::string> senders_;
};

// A UDP port on loopback that nothing listens on: one the kernel just gave and took back.
Endpoint closedPort(Family family) {
  const bool v4 = family == Family::kInet;
  int fd = ::socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  Endpoint e;
  e.address = *IpAddress::parse(v4 ? "127.0.0.1" : "::1");
  sockaddr_storage sa = LoopUdpServer::toStorage(e.address, 0);
  socklen_t len = v4 ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), len), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
  e.port = ntohs(v4 ? reinterpret_cast<sockaddr_in*>(&sa)->sin_port
                    : reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port);
  ::close(fd);
  return e;
}

class UdpCheckerTest : public test::RealLoopTest {
 protected:
  static ProbeTarget target(const Endpoint& at, const std::string& expect = "",
                            Millis timeout = kCheckTimeout) {
    ProbeTarget t;
    t.address = at;
    t.check.type = config::CheckType::kUdp;
    t.check.timeout = timeout;
    t.check.payload = "ping";
    t.check.expect_reply = expect;
    return t;
  }
  ProbeResult run(const ProbeTarget& t) {
    UdpChecker checker(*loop_);
    return probeOnce(checker, t);
  }
};

TEST_F(UdpCheckerTest, AMatchingReplyIsHealthy) {
  LoopUdpServer s(*loop_, Family::kInet, std::string("well, pong to you"));
  ProbeResult r = run(target(s.endpoint(), "pong"));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "reply contains \"pong\"");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout";
  ASSERT_EQ(s.received().size(), 1u);
  EXPECT_EQ(s.received()[0], "ping") << "the payload, as configured";
}

TEST_F(UdpCheckerTest, AnyReplyIsHealthyWithoutExpectReply) {
  LoopUdpServer s(*loop_, Family::kInet, std::string(""));
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "reply of 0 bytes") << "an empty datagram is a reply";
}

TEST_F(UdpCheckerTest, AWrongReplyFailsNamingWhatCame) {
  LoopUdpServer s(*loop_, Family::kInet, std::string("xyz\r\n\x01"));
  ProbeResult r = run(target(s.endpoint(), "pong"));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "reply does not contain \"pong\": got \"xyz\\r\\n\\x01\"");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout: at once, not at the timeout";
}

TEST_F(UdpCheckerTest, ALongWrongReplyIsQuotedOnlyInPart) {
  LoopUdpServer s(*loop_, Family::kInet, std::string(1500, 'x'));
  ProbeResult r = run(target(s.endpoint(), "pong"));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "reply does not contain \"pong\": got \"" + std::string(60, 'x') + "\"...");
}

TEST_F(UdpCheckerTest, NoReplyTimesOut) {
  LoopUdpServer s(*loop_, Family::kInet, std::nullopt);
  ProbeResult r = run(target(s.endpoint(), "", 200ms));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "timed out after 200 ms");
  EXPECT_GE(r.took, 200ms);
  EXPECT_EQ(s.received().size(), 1u);
}

TEST_F(UdpCheckerTest, AClosedPortIsUnreachableAtOnce) {
  ProbeResult r = run(target(closedPort(Family::kInet), "", kCheckTimeout));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "port unreachable");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout";
}

TEST_F(UdpCheckerTest, WithAcceptSilenceASilentServerIsHealthy) {
  LoopUdpServer s(*loop_, Family::kInet, std::nullopt);
  ProbeTarget t = target(s.endpoint(), "", 200ms);
  t.check.accept_silence = true;
  ProbeResult r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "no reply and no port unreachable within 200 ms");
  EXPECT_GE(r.took, 200ms);
}

TEST_F(UdpCheckerTest, WithAcceptSilenceAClosedPortIsStillUnhealthy) {
  ProbeTarget t = target(closedPort(Family::kInet), "", kCheckTimeout);
  t.check.accept_silence = true;
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "port unreachable");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout";
}

TEST_F(UdpCheckerTest, WithAcceptSilenceAWrongReplyIsStillUnhealthy) {
  LoopUdpServer s(*loop_, Family::kInet, std::string("nope"));
  ProbeTarget t = target(s.endpoint(), "pong", 1000ms);
  t.check.accept_silence = true;
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "reply does not contain \"pong\": got \"nope\"");
}

TEST_F(UdpCheckerTest, Ipv6WorksAlike) {
  LoopUdpServer s(*loop_, Family::kInet6, std::string("pong"));
  ProbeResult r = run(target(s.endpoint(), "pong"));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(s.senders().at(0), "::1");
  ProbeResult closed = run(target(closedPort(Family::kInet6)));
  EXPECT_FALSE(closed.ok);
  EXPECT_EQ(closed.reason, "port unreachable");
}

TEST_F(UdpCheckerTest, AProbeLeavesFromTheSourceAddress) {
  LoopUdpServer s(*loop_, Family::kInet, std::string("pong"));
  ProbeTarget t = target(s.endpoint(), "pong");
  t.check.source_address = *IpAddress::parse("127.0.0.2");  // on lo like all of 127/8
  ProbeResult r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;
  ASSERT_EQ(s.senders().size(), 1u);
  EXPECT_EQ(s.senders()[0], "127.0.0.2");
}

TEST_F(UdpCheckerTest, ASourceAddressNotOnThisHostFailsTheProbeSayingSo) {
  LoopUdpServer s(*loop_, Family::kInet, std::string("pong"));
  ProbeTarget t = target(s.endpoint());
  t.check.source_address = *IpAddress::parse("198.51.100.254");
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "cannot bind to 198.51.100.254: cannot assign requested address");
  EXPECT_TRUE(s.received().empty());
}

TEST_F(UdpCheckerTest, OneCheckerProbesAgainAndAgain) {
  LoopUdpServer s(*loop_, Family::kInet, std::string("pong"));
  UdpChecker c(*loop_);
  for (int i = 0; i < 3; ++i) {
    ProbeResult r = probeOnce(c, target(s.endpoint(), "pong"));
    EXPECT_TRUE(r.ok) << r.reason;
  }
  EXPECT_EQ(s.received().size(), 3u);
}

TEST_F(UdpCheckerTest, CancelAbandonsTheProbeWithoutCallingBack) {
  LoopUdpServer s(*loop_, Family::kInet, std::string("pong"));
  UdpChecker c(*loop_);
  EXPECT_FALSE(calledBackAfterCancel(c, target(s.endpoint(), "", 50ms), 100ms));
}

TEST_F(UdpCheckerTest, DestroyingTheCheckerFromItsCallbackIsSafe) {
  LoopUdpServer s(*loop_, Family::kInet, std::string("pong"));
  ProbeResult r =
      probeAndDestroy(std::make_unique<UdpChecker>(*loop_), target(s.endpoint(), "pong"));
  EXPECT_TRUE(r.ok) << r.reason;
}

}  // namespace
}  // namespace tandem::resources::health
