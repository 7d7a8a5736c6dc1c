// The dns checker against a fake DNS server on loopback UDP, both on the libqb loop: the server
// answers each query with whatever the test makes of it (a proper reply, another rcode, garbage,
// a reply with another id, nothing). Healthy and failing replies, a closed port, IPv6, the
// source address, cancel and destruction. A guard timer fails a test whose probe never ends.
#include "health/dns_checker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <vector>

#include "health/probe_socket.h"
#include "resources/health/dns_message.h"
#include "resources/health/real_loop_test.h"

namespace tandem::resources::health {
namespace {

using namespace std::chrono_literals;
using test::kCheckTimeout;
using test::kLoadMargin;
using test::dns::Bytes;
using test::dns::idOf;
using test::dns::reply;

constexpr uint16_t kA = 1;

// A UDP "DNS server" on a loopback address: each datagram it receives is recorded with its
// sender and handed to respond, whose datagrams go back to the sender.
class FakeDnsServer {
 public:
  using Respond = std::function<std::vector<Bytes>(const Bytes& query)>;

  FakeDnsServer(loop::Dispatcher& dispatcher, Family family, Respond respond)
      : respond_(std::move(respond)) {
    endpoint_.address = *IpAddress::parse(family == Family::kInet ? "127.0.0.1" : "::1");
    fd_ = ::socket(family == Family::kInet ? AF_INET : AF_INET6,
                   SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0);
    SocketAddress sa = toSocketAddress(endpoint_.address, 0);
    EXPECT_EQ(::bind(fd_, sa.get(), sa.length), 0);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&sa.storage), &sa.length), 0);
    endpoint_.port =
        ntohs(family == Family::kInet ? reinterpret_cast<sockaddr_in*>(&sa.storage)->sin_port
                                      : reinterpret_cast<sockaddr_in6*>(&sa.storage)->sin6_port);
    auto watch =
        dispatcher.watchFd(fd_, loop::FdEvents{true, false}, [this](loop::FdEvents) { serve(); });
    EXPECT_TRUE(watch.has_value());
    if (watch) watch_ = std::move(*watch);
  }
  ~FakeDnsServer() {
    watch_.reset();
    if (fd_ >= 0) ::close(fd_);
  }
  FakeDnsServer(const FakeDnsServer&) = delete;
  FakeDnsServer& operator=(const FakeDnsServer&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  const std::vector<Bytes>& queries() const { return queries_; }
  // The address the last query came from.
  std::string lastPeer() const { return last_peer_; }

 private:
  void serve() {
    for (;;) {
      uint8_t buf[4096];
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      ssize_t n = ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&peer), &len);
      if (n < 0) return;
      Bytes q(buf, buf + n);
      queries_.push_back(q);
      char text[INET6_ADDRSTRLEN] = {};
      if (peer.ss_family == AF_INET) {
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
      } else {
        ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr, text,
                    sizeof text);
      }
      last_peer_ = text;
      for (const Bytes& out : respond_(q)) {
        (void)::sendto(fd_, out.data(), out.size(), 0, reinterpret_cast<sockaddr*>(&peer), len);
      }
    }
  }

  int fd_ = -1;
  Endpoint endpoint_;
  Respond respond_;
  std::unique_ptr<loop::FdWatch> watch_;
  std::vector<Bytes> queries_;
  std::string last_peer_;
};

// The query turned into a reply to the same question with rcode and no answer.
Bytes withRcode(const Bytes& q, int rcode) {
  Bytes r = q;
  r[2] |= 0x80;
  r[3] = static_cast<uint8_t>(0x80 | rcode);
  return r;
}

// Answers www.example.test A with 198.51.100.7 and anything else with NXDOMAIN, as a real
// server would: the question read back from the query.
std::vector<Bytes> zone(const Bytes& q) {
  const Bytes www = reply(idOf(q), 0, "www.example.test", kA, {});
  if (q.size() == www.size() && std::equal(q.begin() + 12, q.end(), www.begin() + 12)) {
    return {reply(idOf(q), 0, "www.example.test", kA, {{kA, test::dns::address("198.51.100.7")}})};
  }
  return {withRcode(q, 3)};
}

class DnsCheckerTest : public test::RealLoopTest {
 protected:
  ProbeTarget target(const Endpoint& at, std::string name = "www.example.test",
                     Millis timeout = kCheckTimeout) {
    ProbeTarget t;
    t.address = at;
    t.check.type = config::CheckType::kDns;
    t.check.timeout = timeout;
    t.check.query_name = std::move(name);
    return t;
  }
  // s answers name with rcode: unhealthy by default, healthy when that rcode is expected.
  void expectRcodeDecides(const FakeDnsServer& s, std::string name, const std::string& rcode) {
    DnsChecker c(*loop_);
    ProbeTarget t = target(s.endpoint(), std::move(name));
    ProbeResult r = probeOnce(c, t);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.reason, "rcode " + rcode + ", expected NOERROR");
    t.check.expect_rcode = rcode;
    r = probeOnce(c, t);
    EXPECT_TRUE(r.ok) << r.reason;
    EXPECT_EQ(r.reason, rcode + ", 0 answers");
  }
  ProbeResult probeFrom(const FakeDnsServer& s, std::string_view source) {
    DnsChecker c(*loop_);
    ProbeTarget t = target(s.endpoint());
    t.check.source_address = *IpAddress::parse(source);
    return probeOnce(c, t);
  }
};

TEST_F(DnsCheckerTest, AServerThatAnswersIsHealthy) {
  FakeDnsServer s(*loop_, Family::kInet, zone);
  DnsChecker c(*loop_);
  ProbeResult r = probeOnce(c, target(s.endpoint()));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "NOERROR, 1 answer");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout";
  ASSERT_EQ(s.queries().size(), 1u) << "one query, to this server only";
  const Bytes& q = s.queries()[0];
  EXPECT_EQ(q, reply(idOf(q), 0, "www.example.test", kA, {}, false))
      << "a query for www.example.test A IN, recursion desired, nothing else in it";
}

TEST_F(DnsCheckerTest, NxdomainIsHealthyOnlyWhenExpected) {
  FakeDnsServer s(*loop_, Family::kInet, zone);
  expectRcodeDecides(s, "nowhere.example.test", "NXDOMAIN");
}

TEST_F(DnsCheckerTest, ExpectAnswerMustBeInAnAnswerRecord) {
  FakeDnsServer s(*loop_, Family::kInet, zone);
  DnsChecker c(*loop_);
  ProbeTarget t = target(s.endpoint());
  t.check.expect_answer = "198.51.100.7";
  ProbeResult r = probeOnce(c, t);
  EXPECT_TRUE(r.ok) << r.reason;
  t.check.expect_answer = "198.51.100.8";
  r = probeOnce(c, t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "no answer contains \"198.51.100.8\" (got 198.51.100.7)");
}

TEST_F(DnsCheckerTest, RefusedIsAReplyToJudgeNotAReasonToTryAgain) {
  // c-ares would otherwise drop it and try the next server; here it is the answer.
  FakeDnsServer s(*loop_, Family::kInet,
                  [](const Bytes& q) { return std::vector<Bytes>{withRcode(q, 5)}; });
  expectRcodeDecides(s, "www.example.test", "REFUSED");
}

TEST_F(DnsCheckerTest, AReplyWithoutTheQuestionIsJudgedByItsRcode) {
  FakeDnsServer s(*loop_, Family::kInet, [](const Bytes& q) {
    Bytes r = {q[0], q[1], 0x81, 0x81, 0, 0, 0, 0, 0, 0, 0, 0};  // FORMERR, qdcount 0
    return std::vector<Bytes>{r};
  });
  DnsChecker c(*loop_);
  ProbeResult r = probeOnce(c, target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "rcode FORMERR, expected NOERROR");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout: at once, not left to time out";
}

TEST_F(DnsCheckerTest, GarbageFailsAtOnceSayingSo) {
  struct Case {
    std::function<Bytes(const Bytes&)> answer;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {[](const Bytes&) {
         return Bytes{'j', 'u', 'n', 'k', '\n'};
       },
       "garbage reply: 5 bytes, shorter than a DNS header"},
      // c-ares alone would call this "connection refused"
      {[](const Bytes&) { return Bytes{}; }, "garbage reply: an empty datagram"},
      {[](const Bytes& q) {
         return reply(idOf(q), 0, "www.example.test", kA, {{kA, {198, 51}}});
       },
       "garbage reply: answer 1: A record of 2 bytes"},
      {[](const Bytes& q) { return q; }, "garbage reply: a query, not a response"},
  };
  for (const auto& k : cases) {
    FakeDnsServer s(*loop_, Family::kInet,
                    [&](const Bytes& q) { return std::vector<Bytes>{k.answer(q)}; });
    DnsChecker c(*loop_);
    ProbeResult r = probeOnce(c, target(s.endpoint()));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.reason, k.reason);
    EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout: at once, not left to time out";
  }
}

TEST_F(DnsCheckerTest, AReplyWithAnotherIdIsIgnoredAndTheProbeTimesOut) {
  FakeDnsServer s(*loop_, Family::kInet, [](const Bytes& q) {
    return std::vector<Bytes>{reply(static_cast<uint16_t>(idOf(q) + 1), 0, "www.example.test", kA,
                                    {{kA, test::dns::address("198.51.100.7")}})};
  });
  DnsChecker c(*loop_);
  ProbeResult r = probeOnce(c, target(s.endpoint(), "www.example.test", 200ms));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "timed out after 200 ms (ignored 1 reply with another query id)");
  EXPECT_GE(r.took, 200ms);
}

TEST_F(DnsCheckerTest, NoReplyTimesOut) {
  FakeDnsServer s(*loop_, Family::kInet, [](const Bytes&) { return std::vector<Bytes>{}; });
  DnsChecker c(*loop_);
  ProbeResult r = probeOnce(c, target(s.endpoint(), "www.example.test", 200ms));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "timed out after 200 ms");
  EXPECT_GE(r.took, 200ms);
  EXPECT_LT(r.took, 200ms + kLoadMargin) << "check.timeout (200 ms) and the load margin";
  EXPECT_EQ(s.queries().size(), 1u) << "tries = 1: no retransmission within the timeout";
}

TEST_F(DnsCheckerTest, AClosedPortIsRefused) {
  Endpoint at;
  {
    FakeDnsServer gone(*loop_, Family::kInet, zone);
    at = gone.endpoint();
  }
  DnsChecker c(*loop_);
  ProbeResult r = probeOnce(c, target(at));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "connection refused");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout";
}

TEST_F(DnsCheckerTest, ATruncatedReplyIsRetriedOverTcpWithinTheTimeout) {
  // No TCP listener on the port: the retry c-ares makes over TCP is refused.
  FakeDnsServer s(*loop_, Family::kInet, [](const Bytes& q) {
    return std::vector<Bytes>{reply(idOf(q), 0, "www.example.test", kA, {}, true, true)};
  });
  DnsChecker c(*loop_);
  ProbeResult r = probeOnce(c, target(s.endpoint(), "www.example.test", 500ms));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "connection refused");
}

TEST_F(DnsCheckerTest, Ipv6WorksAlike) {
  FakeDnsServer s(*loop_, Family::kInet6, zone);
  DnsChecker c(*loop_);
  ProbeResult r = probeOnce(c, target(s.endpoint()));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(s.lastPeer(), "::1");
}

TEST_F(DnsCheckerTest, AProbeLeavesFromTheSourceAddress) {
  FakeDnsServer s(*loop_, Family::kInet, zone);
  ProbeResult r = probeFrom(s, "127.0.0.2");  // on lo like all of 127/8
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(s.lastPeer(), "127.0.0.2");
}

TEST_F(DnsCheckerTest, ASourceAddressNotOnThisHostFailsTheProbeSayingSo) {
  FakeDnsServer s(*loop_, Family::kInet, zone);
  ProbeResult r = probeFrom(s, "198.51.100.254");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "cannot bind to 198.51.100.254: cannot assign requested address");
  EXPECT_TRUE(s.queries().empty());
}

TEST_F(DnsCheckerTest, ANameThatCannotBeAskedFailsSayingSo) {
  FakeDnsServer s(*loop_, Family::kInet, zone);
  DnsChecker c(*loop_);
  ProbeResult r = probeOnce(c, target(s.endpoint(), std::string(64, 'a') + ".example.test"));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("cannot ask for"), std::string::npos) << r.reason;
}

TEST_F(DnsCheckerTest, CancelAbandonsTheProbeWithoutCallingBack) {
  FakeDnsServer s(*loop_, Family::kInet, zone);
  DnsChecker c(*loop_);
  bool called = false;
  c.probe(target(s.endpoint()), [&](ProbeResult) { called = true; });
  c.cancel();
  auto stop = loop_->createTimer([this] { loop_->stop(); });
  stop->arm(100ms);
  loop_->run();
  EXPECT_FALSE(called);
  EXPECT_EQ(s.queries().size(), 1u) << "the query had gone out; its reply finds no socket";
}

TEST_F(DnsCheckerTest, DestroyingTheCheckerMidProbeCallsNothing) {
  FakeDnsServer s(*loop_, Family::kInet, [](const Bytes&) { return std::vector<Bytes>{}; });
  auto c = std::make_unique<DnsChecker>(*loop_);
  bool called = false;
  c->probe(target(s.endpoint()), [&](ProbeResult) { called = true; });
  auto destroy = loop_->createTimer([&] { c.reset(); });
  destroy->arm(20ms);
  auto stop = loop_->createTimer([this] { loop_->stop(); });
  stop->arm(100ms);
  loop_->run();
  EXPECT_FALSE(called);
}

TEST_F(DnsCheckerTest, DoneMayDestroyTheChecker) {
  FakeDnsServer s(*loop_, Family::kInet, zone);
  auto c = std::make_unique<DnsChecker>(*loop_);
  std::optional<ProbeResult> result;
  c->probe(target(s.endpoint()), [&](ProbeResult r) {
    result = std::move(r);
    c.reset();
    loop_->stop();
  });
  runLoop();
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->ok) << result->reason;
}

}  // namespace
}  // namespace tandem::resources::health
