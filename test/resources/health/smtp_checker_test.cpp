// The smtp checker against a scripted SMTP server on loopback, on the libqb loop: a good server
// (multi-line greeting and EHLO reply) is healthy and is sent EHLO and QUIT; a 554 greeting, an
// EHLO refused, garbage, a server that closes early, one that never greets, an overlong line
// and one that talks forever each fail with their reason, within the timeout and the byte
// limit; a closed port is refused; IPv6 and source_address work. A guard timer fails a test
// whose probe never ends; nothing sleeps.
#include "health/smtp_checker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "resources/health/real_loop_test.h"

namespace tandem::resources::health {
namespace {

using namespace std::chrono_literals;
using test::kCheckTimeout;
using test::kLoadMargin;

// What the scripted server does on each connection.
struct Script {
  std::optional<std::string> banner;  // written on accept; nullopt: never greets
  bool close_after_banner = false;
  std::string ehlo_reply;  // written once a line starting "EHLO " has come
  std::string stream;      // when set, written over and over after the banner, forever
};

// A scripted SMTP server on the test's loop: it listens on loopback, follows its script on
// each connection and records what each client sent until it left.
class LoopSmtpServer {
 public:
  LoopSmtpServer(loop::Dispatcher& dispatcher, Family family, Script script)
      : dispatcher_(dispatcher), script_(std::move(script)), listener_(family, 16, SOCK_NONBLOCK) {
    auto watch = dispatcher_.watchFd(listener_.fd, loop::FdEvents{true, false},
                                     [this](loop::FdEvents) { acceptAll(); });
    EXPECT_TRUE(watch.has_value());
    if (watch) listen_watch_ = std::move(*watch);
  }
  ~LoopSmtpServer() {
    conns_.clear();
    listen_watch_.reset();
  }
  LoopSmtpServer(const LoopSmtpServer&) = delete;
  LoopSmtpServer& operator=(const LoopSmtpServer&) = delete;

  const Endpoint& endpoint() const { return listener_.endpoint; }
  // What each finished connection's client sent.
  const std::vector<std::string>& sessions() const { return sessions_; }
  // The source address of each connection, as text.
  const std::vector<std::string>& peers() const { return peers_; }
  size_t bytesSent() const { return bytes_sent_; }
  void onClose(std::function<void()> f) { on_close_ = std::move(f); }

 private:
  struct Conn {
    int fd = -1;
    std::unique_ptr<loop::FdWatch> watch;
    std::string in;
    std::string out;
    bool ehlo_answered = false;
    bool close_when_written = false;
    ~Conn() {
      watch.reset();
      if (fd >= 0) ::close(fd);
    }
  };

  void acceptAll() {
    for (;;) {
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      int fd = ::accept4(listener_.fd, reinterpret_cast<sockaddr*>(&peer), &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      char text[INET6_ADDRSTRLEN] = {};
      if (peer.ss_family == AF_INET) {
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
      } else {
        ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr, text,
                    sizeof text);
      }
      peers_.emplace_back(text);
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      if (script_.banner) c->out = *script_.banner;
      c->close_when_written = script_.close_after_banner;
      auto watch = dispatcher_.watchFd(fd, loop::FdEvents{true, true}, [this, fd](loop::FdEvents) {
        auto it = conns_.find(fd);
        if (it != conns_.end() && !step(*it->second)) close(it);
      });
      EXPECT_TRUE(watch.has_value());
      if (!watch) continue;
      c->watch = std::move(*watch);
      conns_.emplace(fd, std::move(c));
    }
  }

  void close(std::map<int, std::unique_ptr<Conn>>::iterator it) {
    sessions_.push_back(it->second->in);
    conns_.erase(it);
    if (on_close_) on_close_();
  }

  // Moves the connection on as far as it goes; false when it is over.
  bool step(Conn& c) {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return false;
      if (n < 0) break;
      c.in.append(buf, static_cast<size_t>(n));
    }
    if (!c.ehlo_answered && c.in.find("EHLO ") == 0 && c.in.find('\n') != std::string::npos) {
      c.ehlo_answered = true;
      c.out += script_.ehlo_reply;
    }
    for (;;) {
      if (c.out.empty() && !script_.stream.empty() && !c.close_when_written) {
        c.out = script_.stream;
      }
      if (c.out.empty()) break;
      const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      if (n < 0) return false;  // the client left
      bytes_sent_ += static_cast<size_t>(n);
      c.out.erase(0, static_cast<size_t>(n));
    }
    if (c.out.empty() && c.close_when_written) return false;
    c.watch->setInterest(loop::FdEvents{true, !c.out.empty()});
    return true;
  }

  loop::Dispatcher& dispatcher_;
  Script script_;
  test::LoopbackListener listener_;
  std::unique_ptr<loop::FdWatch> listen_watch_;
  std::map<int, std::unique_ptr<Conn>> conns_;
  std::vector<std::string> sessions_;
  std::vector<std::string> peers_;
  size_t bytes_sent_ = 0;
  std::function<void()> on_close_;
};

const char kGoodBanner[] = "220-mail.example.test ESMTP\r\n220 no UCE\r\n";
const char kGoodEhlo[] =
    "250-mail.example.test greets tandem\r\n250-PIPELINING\r\n250 8BITMIME\r\n";

class SmtpCheckerTest : public test::RealLoopTest {
 protected:
  static ProbeTarget target(const Endpoint& at, Millis timeout = kCheckTimeout) {
    ProbeTarget t;
    t.address = at;
    t.check.type = config::CheckType::kSmtp;
    t.check.timeout = timeout;
    return t;
  }
  ProbeResult run(const ProbeTarget& t) {
    SmtpChecker checker(*loop_);
    return probeOnce(checker, t);
  }
  // Runs the loop until the server has seen the client leave.
  void untilServerSeesTheEnd(LoopSmtpServer& s, size_t sessions = 1) {
    if (s.sessions().size() >= sessions) return;
    s.onClose([&] {
      if (s.sessions().size() >= sessions) loop_->stop();
    });
    runLoop();
  }
};

TEST_F(SmtpCheckerTest, AGoodServerIsHealthyAndIsSentEhloThenQuit) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{kGoodBanner, false, kGoodEhlo, ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "220 banner, EHLO 250");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout";
  untilServerSeesTheEnd(s);
  EXPECT_EQ(s.sessions().at(0), "EHLO tandem\r\nQUIT\r\n");
}

TEST_F(SmtpCheckerTest, TheHeloNameIsSent) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{"220 hi\n", false, "250 ok\n", ""});
  ProbeTarget t = target(s.endpoint());
  t.check.helo = "director1.example.test";
  ProbeResult r = run(t);
  EXPECT_TRUE(r.ok) << r.reason << " (bare LF line ends are taken too)";
  untilServerSeesTheEnd(s);
  EXPECT_EQ(s.sessions().at(0), "EHLO director1.example.test\r\nQUIT\r\n");
}

TEST_F(SmtpCheckerTest, AHeloWithALineBreakIsNeverSent) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{kGoodBanner, false, kGoodEhlo, ""});
  ProbeTarget t = target(s.endpoint());
  t.check.helo = "x\r\nMAIL FROM:<a@example.test>";
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "helo \"x\\r\\nMAIL FROM:<a@example.test>\" holds a line break");
  EXPECT_TRUE(s.peers().empty()) << "not even connected";
}

TEST_F(SmtpCheckerTest, A554BannerFailsWithItsCodeAndText) {
  LoopSmtpServer s(*loop_, Family::kInet,
                   Script{"554 mail.example.test no service here\r\n", false, kGoodEhlo, ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "banner 554: \"mail.example.test no service here\"");
  untilServerSeesTheEnd(s);
  EXPECT_EQ(s.sessions().at(0), "") << "no EHLO after a refusal";
}

TEST_F(SmtpCheckerTest, AnEhloRefusedFailsWithItsCodeAndText) {
  LoopSmtpServer s(*loop_, Family::kInet,
                   Script{kGoodBanner, false, "550-not you\r\n550 go away\r\n", ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "EHLO answered 550: \"not you\"");
}

TEST_F(SmtpCheckerTest, AGarbageBannerFailsQuotingIt) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{"SSH-2.0-OpenSSH_9.2\r\n", false, "", ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "garbage banner \"SSH-2.0-OpenSSH_9.2\"");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout";
}

TEST_F(SmtpCheckerTest, GarbageWithoutALineEndFailsAtOnce) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{std::string("\x16\x03\x01", 3), false, "", ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "garbage banner \"\\x16\\x03\\x01\"");
  EXPECT_LT(r.took, kCheckTimeout) << "before check.timeout: not at the timeout";
}

TEST_F(SmtpCheckerTest, MixedCodesInTheEhloReplyFail) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{kGoodBanner, false, "250-a\r\n220 b\r\n", ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "EHLO reply mixes reply codes: 250 then 220");
}

TEST_F(SmtpCheckerTest, AServerThatClosesAtOnceFailsBeforeTheBanner) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{"", true, "", ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "connection closed before the banner");
}

TEST_F(SmtpCheckerTest, AServerThatClosesInTheMiddleOfTheBannerFails) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{"220-first line\r\n", true, "", ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "connection closed in the middle of the banner");
  LoopSmtpServer cut(*loop_, Family::kInet, Script{"220-first line\r\n220 sec", true, "", ""});
  r = run(target(cut.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "connection closed in the middle of the banner: got \"220 sec\"");
}

TEST_F(SmtpCheckerTest, AServerThatClosesAfterTheBannerFailsBeforeTheEhloReply) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{kGoodBanner, true, "", ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  // The EHLO may meet the closed socket first, which resets it.
  EXPECT_TRUE(r.reason == "connection closed before the EHLO reply" ||
              r.reason == "connection reset by peer")
      << r.reason;
}

TEST_F(SmtpCheckerTest, AServerThatNeverGreetsTimesOut) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{std::nullopt, false, "", ""});
  ProbeResult r = run(target(s.endpoint(), 200ms));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "timed out after 200 ms waiting for the banner");
  EXPECT_GE(r.took, 200ms);
  EXPECT_LT(r.took, 200ms + kLoadMargin) << "check.timeout (200 ms) and the load margin";
}

TEST_F(SmtpCheckerTest, AServerThatNeverAnswersEhloTimesOut) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{kGoodBanner, false, "", ""});
  ProbeResult r = run(target(s.endpoint(), 200ms));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "timed out after 200 ms waiting for the EHLO reply");
}

TEST_F(SmtpCheckerTest, AnOverlongLineFails) {
  LoopSmtpServer s(*loop_, Family::kInet,
                   Script{"220 " + std::string(3000, 'a') + "\r\n", false, "", ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "reply line longer than 1000 bytes");
}

TEST_F(SmtpCheckerTest, AServerThatTalksForeverIsCutOffByTheByteLimit) {
  // Well-formed continuation lines that never end the reply.
  std::string lines;
  for (int i = 0; i < 256; ++i) lines += "220-more to say\r\n";
  LoopSmtpServer s(*loop_, Family::kInet, Script{"", false, "", lines});
  constexpr Millis kTimeout = 3000ms;
  ProbeResult r = run(target(s.endpoint(), kTimeout));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "more than 16384 bytes waiting for the banner");
  EXPECT_LT(r.took, kTimeout) << "before check.timeout (3 s): cut off by its bytes";
  EXPECT_GT(s.bytesSent(), 16384u);
}

TEST_F(SmtpCheckerTest, AClosedPortIsRefused) {
  uint16_t port = 0;
  {
    test::LoopbackListener gone(Family::kInet);
    port = gone.port;
  }
  ProbeResult r = run(target(*Endpoint::parse("127.0.0.1:" + std::to_string(port), false)));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "connection refused");
}

TEST_F(SmtpCheckerTest, Ipv6WorksAlike) {
  LoopSmtpServer s(*loop_, Family::kInet6, Script{kGoodBanner, false, kGoodEhlo, ""});
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_TRUE(r.ok) << r.reason;
}

TEST_F(SmtpCheckerTest, AProbeLeavesFromTheSourceAddress) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{kGoodBanner, false, kGoodEhlo, ""});
  ProbeTarget t = target(s.endpoint());
  t.check.source_address = *IpAddress::parse("127.0.0.2");
  ProbeResult r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;
  ASSERT_EQ(s.peers().size(), 1u);
  EXPECT_EQ(s.peers()[0], "127.0.0.2");
}

TEST_F(SmtpCheckerTest, OneCheckerProbesAgainAndAgain) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{kGoodBanner, false, kGoodEhlo, ""});
  SmtpChecker c(*loop_);
  for (int i = 0; i < 3; ++i) {
    ProbeResult r = probeOnce(c, target(s.endpoint()));
    EXPECT_TRUE(r.ok) << r.reason;
  }
  untilServerSeesTheEnd(s, 3);
  EXPECT_EQ(s.sessions().size(), 3u);
}

TEST_F(SmtpCheckerTest, CancelAbandonsTheProbeWithoutCallingBack) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{kGoodBanner, false, kGoodEhlo, ""});
  SmtpChecker c(*loop_);
  EXPECT_FALSE(calledBackAfterCancel(c, target(s.endpoint(), 50ms), 100ms));
}

TEST_F(SmtpCheckerTest, DestroyingTheCheckerFromItsCallbackIsSafe) {
  LoopSmtpServer s(*loop_, Family::kInet, Script{kGoodBanner, false, kGoodEhlo, ""});
  ProbeResult r = probeAndDestroy(std::make_unique<SmtpChecker>(*loop_), target(s.endpoint()));
  EXPECT_TRUE(r.ok) << r.reason;
}

}  // namespace
}  // namespace tandem::resources::health
