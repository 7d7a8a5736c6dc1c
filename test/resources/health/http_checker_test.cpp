// The http and https checkers against a canned server on loopback (loop_http_server.h), both on
// the libqb loop: what counts as healthy (status ranges, expected body), what the request
// carries (method, path, Host, SNI), every way a probe fails and the reason it gives, the
// response limit, the timeout, cancel and destruction mid-probe, and TLS with and without
// verification against a certificate the openssl tool makes for the suite. A guard timer fails
// a test whose probe never ends; nothing sleeps.
#include "health/http_checker.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "resources/health/loop_http_server.h"
#include "resources/health/real_loop_test.h"

extern char** environ;

namespace tandem::resources::health {
namespace {

using namespace std::chrono_literals;
using config::CheckType;
using test::kLoadMargin;
using test::LoopHttpServer;

// A whole response. Without a Content-Length the body ends when the server closes.
std::string answer(int status, const std::string& body = "", bool content_length = true) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " Canned\r\n";
  if (content_length) head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return head + "Connection: close\r\n\r\n" + body;
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

class HttpCheckerTest : public test::RealLoopTest {
 protected:
  static ProbeTarget target(const Endpoint& at, CheckType type = CheckType::kHttp) {
    ProbeTarget t;
    t.address = at;
    t.check.type = type;
    // Long enough for a loaded machine or a sanitizer build to load the system's CA store (seen
    // over 1 s under ASan in CI); the tests of the timeout set their own.
    t.check.timeout = 20s;
    return t;
  }

  ProbeResult run(Checker& checker, const ProbeTarget& t) { return probeOnce(checker, t); }
  ProbeResult run(const ProbeTarget& t) {
    HttpChecker checker(*loop_);
    return probeOnce(checker, t);
  }
};

TEST_F(HttpCheckerTest, AnOkAnswerIsHealthy) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200, "hello"));
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "HTTP 200");
  EXPECT_LT(r.took, target(s.endpoint()).check.timeout) << "before check.timeout";
  ASSERT_EQ(s.requests().size(), 1u);
  EXPECT_TRUE(startsWith(s.requests()[0], "GET / HTTP/1.1\r\n")) << s.requests()[0];
  EXPECT_NE(s.requests()[0].find("\r\nHost: 127.0.0.1:" + std::to_string(s.port()) + "\r\n"),
            std::string::npos)
      << "without host: the real server's address\n"
      << s.requests()[0];
}

TEST_F(HttpCheckerTest, A503IsUnhealthyWithTheStatusInTheReason) {
  LoopHttpServer s(*loop_, Family::kInet, answer(503, "busy"));
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "HTTP 503 not in 200-399");
}

TEST_F(HttpCheckerTest, ARedirectIsHealthyInTheDefaultRangeAndNotFollowed) {
  LoopHttpServer s(*loop_, Family::kInet,
                   "HTTP/1.1 301 Moved\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n");
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "HTTP 301");
  EXPECT_EQ(s.requests().size(), 1u);
}

TEST_F(HttpCheckerTest, ExpectStatusNamesTheHealthyCodes) {
  LoopHttpServer moved(*loop_, Family::kInet, answer(301));
  ProbeTarget t = target(moved.endpoint());
  t.check.expect_status = {{200, 200}, {204, 206}};
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "HTTP 301 not in 200, 204-206");

  LoopHttpServer teapot(*loop_, Family::kInet, answer(418));
  t = target(teapot.endpoint());
  t.check.expect_status = {{200, 200}, {418, 418}};
  r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "HTTP 418");
}

TEST_F(HttpCheckerTest, ExpectBodyMustBeInTheBody) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200, "status: ok\n"));
  ProbeTarget t = target(s.endpoint());
  t.check.expect_body = "ok";
  ProbeResult r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;

  t.check.expect_body = "ready";
  r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "body does not contain \"ready\"");

  t.check.expect_body = "";
  t.check.expect_body_regex = "^status: (ok|ready)$";
  r = run(t);
  EXPECT_FALSE(r.ok) << "the body ends in a newline";
  EXPECT_EQ(r.reason, "body does not match /^status: (ok|ready)$/");
}

TEST_F(HttpCheckerTest, ExpectBodyRegexMatchesTheWholeBodyPastANul) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200, std::string("x\0y\nstatus: ready\n", 18)));
  ProbeTarget t = target(s.endpoint());
  t.check.expect_body_regex = "status: (ok|ready)";
  ProbeResult r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;
}

TEST_F(HttpCheckerTest, AProbeLeavesFromTheSourceAddress) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200));
  ProbeTarget t = target(s.endpoint());
  t.check.source_address = *IpAddress::parse("127.0.0.3");
  ProbeResult r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(s.peers(), (std::vector<std::string>{"127.0.0.3"}));
}

TEST_F(HttpCheckerTest, HeadSendsAHeadRequestForThePath) {
  // A HEAD answer declares the length of a body it does not send, here beyond max_response.
  LoopHttpServer s(*loop_, Family::kInet, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n");
  ProbeTarget t = target(s.endpoint());
  t.check.method = config::HttpMethod::kHead;
  t.check.path = "/healthz?full=1";
  ProbeResult r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;
  ASSERT_EQ(s.requests().size(), 1u);
  EXPECT_TRUE(startsWith(s.requests()[0], "HEAD /healthz?full=1 HTTP/1.1\r\n")) << s.requests()[0];
}

TEST_F(HttpCheckerTest, HostIsSentAsTheHostHeaderToTheRealServersAddress) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200));
  ProbeTarget t = target(s.endpoint());
  t.check.host = "rs.example";
  ProbeResult r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;
  ASSERT_EQ(s.requests().size(), 1u) << "the connection went to the real server";
  EXPECT_NE(s.requests()[0].find("\r\nHost: rs.example:" + std::to_string(s.port()) + "\r\n"),
            std::string::npos)
      << s.requests()[0];
}

TEST_F(HttpCheckerTest, GarbageIsNotHttp) {
  LoopHttpServer ssh(*loop_, Family::kInet, std::string("SSH-2.0-OpenSSH_9.2p1\r\n"));
  ProbeResult r = run(target(ssh.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(startsWith(r.reason, "not HTTP: ")) << r.reason;

  LoopHttpServer bad_status(*loop_, Family::kInet, std::string("HTTP/1.1 2x0 OK\r\n\r\n"));
  r = run(target(bad_status.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(startsWith(r.reason, "not HTTP: ")) << r.reason;
}

TEST_F(HttpCheckerTest, AServerThatClosesWithoutAReplyFails) {
  LoopHttpServer s(*loop_, Family::kInet, std::string());
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "closed without a reply");
}

TEST_F(HttpCheckerTest, ABodyOfMaxResponseBytesIsReadWhole) {
  const std::string body = std::string(1023, 'x') + "!";
  for (bool declared : {true, false}) {
    LoopHttpServer s(*loop_, Family::kInet, answer(200, body, declared));
    ProbeTarget t = target(s.endpoint());
    t.check.max_response = 1024;
    t.check.expect_body = "!";
    ProbeResult r = run(t);
    EXPECT_TRUE(r.ok) << "Content-Length " << (declared ? "sent" : "not sent")
                      << ", the last byte looked at too: " << r.reason;
  }
}

TEST_F(HttpCheckerTest, ABodyLargerThanMaxResponseFails) {
  LoopHttpServer declared(*loop_, Family::kInet, answer(200, std::string(1025, 'x')));
  ProbeTarget t = target(declared.endpoint());
  t.check.max_response = 1024;
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "response larger than 1024 bytes");
}

TEST_F(HttpCheckerTest, AStreamedBodyIsReadOnlyUpToMaxResponse) {
  // No Content-Length: the body runs until the server closes. 32 MiB is more than the socket
  // buffers on both sides hold, so had the checker read on, the server would have sent it all.
  const std::string body(32u << 20, 'x');
  LoopHttpServer s(*loop_, Family::kInet, answer(200, body, false));
  ProbeTarget t = target(s.endpoint());
  t.check.max_response = 4096;
  t.check.timeout = 3000ms;
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "response larger than 4096 bytes");
  EXPECT_LT(s.bytesSent(), body.size());
}

TEST_F(HttpCheckerTest, AServerThatNeverAnswersTimesOut) {
  LoopHttpServer s(*loop_, Family::kInet, std::nullopt);
  ProbeTarget t = target(s.endpoint());
  t.check.timeout = 300ms;
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "timed out after 300 ms");
  EXPECT_GE(r.took, 300ms);
  EXPECT_LT(r.took, 300ms + kLoadMargin) << "check.timeout (300 ms) and the load margin";
  EXPECT_EQ(s.requests().size(), 1u) << "it timed out waiting for the answer, not connecting";
}

TEST_F(HttpCheckerTest, AClosedPortIsRefused) {
  Endpoint at;
  {
    LoopHttpServer gone(*loop_, Family::kInet, std::nullopt);
    at = gone.endpoint();
  }
  ProbeResult r = run(target(at));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "connection refused");
}

TEST_F(HttpCheckerTest, Ipv6WorksAlikeWithAndWithoutHost) {
  LoopHttpServer s(*loop_, Family::kInet6, answer(200));
  ProbeResult r = run(target(s.endpoint()));
  EXPECT_TRUE(r.ok) << r.reason;
  ProbeTarget t = target(s.endpoint());
  t.check.host = "rs.example";
  r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;
  ASSERT_EQ(s.requests().size(), 2u);
  const std::string port = std::to_string(s.port());
  EXPECT_NE(s.requests()[0].find("\r\nHost: [::1]:" + port + "\r\n"), std::string::npos)
      << s.requests()[0];
  EXPECT_NE(s.requests()[1].find("\r\nHost: rs.example:" + port + "\r\n"), std::string::npos)
      << s.requests()[1];
}

TEST_F(HttpCheckerTest, EachProbeOpensItsOwnConnectionAndMayStartTheNext) {
  LoopHttpServer s(*loop_, Family::kInet, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  HttpChecker c(*loop_);
  const ProbeTarget t = target(s.endpoint());
  std::vector<ProbeResult> results;
  c.probe(t, [&](ProbeResult first) {
    results.push_back(std::move(first));
    c.probe(t, [&](ProbeResult second) {
      results.push_back(std::move(second));
      loop_->stop();
    });
  });
  runLoop();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].ok) << results[0].reason;
  EXPECT_TRUE(results[1].ok) << results[1].reason;
  EXPECT_EQ(s.accepted(), 2) << "no connection kept from one probe to the next";
}

TEST_F(HttpCheckerTest, CancelClosesTheConnectionWithoutCallingBack) {
  LoopHttpServer silent(*loop_, Family::kInet, std::nullopt);
  HttpChecker c(*loop_);
  bool called = false;
  silent.onRequest([this] { loop_->stop(); });
  c.probe(target(silent.endpoint()), [&](ProbeResult) { called = true; });
  runLoop();
  ASSERT_EQ(silent.requests().size(), 1u);
  c.cancel();
  silent.onClose([this] { loop_->stop(); });
  runLoop();  // until the server sees the connection go
  EXPECT_FALSE(called);

  LoopHttpServer ok(*loop_, Family::kInet, answer(200));
  ProbeResult r = run(c, target(ok.endpoint()));
  EXPECT_TRUE(r.ok) << "the checker probes again after a cancel: " << r.reason;
  EXPECT_FALSE(called);
}

TEST_F(HttpCheckerTest, DestroyingTheCheckerMidProbeClosesTheConnection) {
  LoopHttpServer silent(*loop_, Family::kInet, std::nullopt);
  auto c = std::make_unique<HttpChecker>(*loop_);
  bool called = false;
  silent.onRequest([this] { loop_->stop(); });
  c->probe(target(silent.endpoint()), [&](ProbeResult) { called = true; });
  runLoop();
  c.reset();
  silent.onClose([this] { loop_->stop(); });
  runLoop();
  EXPECT_FALSE(called);
}

TEST_F(HttpCheckerTest, TheCallbackMayDestroyTheChecker) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200));
  auto c = std::make_unique<HttpChecker>(*loop_);
  std::optional<ProbeResult> out;
  c->probe(target(s.endpoint()), [&](ProbeResult r) {
    out = std::move(r);
    c.reset();
    loop_->stop();
  });
  runLoop();
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->ok) << out->reason;
  EXPECT_FALSE(c);
  // The loop goes on serving others.
  EXPECT_TRUE(run(target(s.endpoint())).ok);
}

// https against a TLS server on the loop with a self-signed certificate for rs.example, made
// once for the suite.
class HttpsCheckerTest : public HttpCheckerTest {
 protected:
  static void SetUpTestSuite() {
    char dir[] = "/tmp/tandem-https-test-XXXXXX";
    if (::mkdtemp(dir) == nullptr) return;
    dir_ = dir;
    cert_ = dir_ + "/cert.pem";
    const std::string key = dir_ + "/key.pem";
    std::vector<std::string> args = {"openssl", "req",   "-x509",          "-newkey", "rsa:2048",
                                     "-nodes",  "-subj", "/CN=rs.example", "-keyout", key,
                                     "-out",    cert_,   "-days",          "1"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, "openssl", &quiet, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&quiet);
    if (rc != 0) return;  // ENOENT: not installed
    openssl_found_ = true;
    int status = 0;
    made_ = ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    key_ = key;
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  void SetUp() override {
    if (!openssl_found_) GTEST_SKIP() << "SKIPPED: openssl not found";
    ASSERT_TRUE(made_) << "openssl req could not make a certificate in " << dir_;
    HttpCheckerTest::SetUp();
    tls_ = SSL_CTX_new(TLS_server_method());
    ASSERT_NE(tls_, nullptr);
    ASSERT_EQ(SSL_CTX_use_certificate_file(tls_, cert_.c_str(), SSL_FILETYPE_PEM), 1);
    ASSERT_EQ(SSL_CTX_use_PrivateKey_file(tls_, key_.c_str(), SSL_FILETYPE_PEM), 1);
  }
  void TearDown() override {
    if (tls_ != nullptr) SSL_CTX_free(tls_);
    HttpCheckerTest::TearDown();
  }

  static ProbeTarget httpsTarget(const Endpoint& at) { return target(at, CheckType::kHttps); }
  // Verified against the suite's certificate as the only CA.
  static ProbeTarget verifiedTarget(const Endpoint& at, const std::string& host) {
    ProbeTarget t = httpsTarget(at);
    t.check.tls_verify = true;
    t.check.ca_file = cert_;
    t.check.host = host;
    return t;
  }

  static inline std::string dir_;
  static inline std::string cert_;
  static inline std::string key_;
  static inline bool openssl_found_ = false;
  static inline bool made_ = false;
  SSL_CTX* tls_ = nullptr;
};

TEST_F(HttpsCheckerTest, WithoutVerificationAnyCertificateIsHealthy) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200, "secure"), tls_);
  ProbeTarget t = httpsTarget(s.endpoint());
  t.check.expect_body = "secure";
  ProbeResult r = run(t);
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "HTTP 200");
  ASSERT_EQ(s.serverNames().size(), 1u);
  EXPECT_EQ(s.serverNames()[0], "") << "no SNI for an address";
}

TEST_F(HttpsCheckerTest, VerificationRefusesASelfSignedCertificateFromTheSystemStore) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200), tls_);
  ProbeTarget t = httpsTarget(s.endpoint());
  t.check.tls_verify = true;
  t.check.host = "rs.example";
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(startsWith(r.reason, "TLS: ")) << r.reason;
  EXPECT_NE(r.reason.find("certificate"), std::string::npos) << r.reason;
  EXPECT_TRUE(s.requests().empty()) << "nothing is sent to a server that is not trusted";
}

TEST_F(HttpsCheckerTest, VerificationWithCaFileAndHostIsHealthy) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200), tls_);
  ProbeResult r = run(verifiedTarget(s.endpoint(), "rs.example"));
  EXPECT_TRUE(r.ok) << r.reason;
  ASSERT_EQ(s.serverNames().size(), 1u);
  EXPECT_EQ(s.serverNames()[0], "rs.example") << "the host is the SNI";
  EXPECT_NE(s.requests()[0].find("\r\nHost: rs.example:" + std::to_string(s.port()) + "\r\n"),
            std::string::npos)
      << s.requests()[0];
}

TEST_F(HttpsCheckerTest, VerificationChecksTheCertificateAgainstTheName) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200), tls_);
  ProbeTarget t = verifiedTarget(s.endpoint(), "other.example");
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(startsWith(r.reason, "TLS: ")) << r.reason;
  EXPECT_NE(r.reason.find("other.example"), std::string::npos) << r.reason;

  t.check.host.clear();
  r = run(t);
  EXPECT_FALSE(r.ok) << "a certificate for rs.example does not serve 127.0.0.1";
  EXPECT_TRUE(startsWith(r.reason, "TLS: ")) << r.reason;
}

TEST_F(HttpsCheckerTest, AMissingCaFileFailsAsTls) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200), tls_);
  ProbeTarget t = httpsTarget(s.endpoint());
  t.check.tls_verify = true;
  t.check.ca_file = dir_ + "/absent.pem";
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(startsWith(r.reason, "TLS: ")) << r.reason;
}

TEST_F(HttpsCheckerTest, PlainHttpToATlsServerFails) {
  LoopHttpServer s(*loop_, Family::kInet, answer(200), tls_);
  ProbeTarget t = target(s.endpoint());
  t.check.timeout = 500ms;
  ProbeResult r = run(t);
  EXPECT_FALSE(r.ok) << r.reason;
  EXPECT_TRUE(s.requests().empty());
}

}  // namespace
}  // namespace tandem::resources::health
