#include "metrics/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "loop/qb_dispatcher.h"

// The listener with the real loop and real sockets on 127.0.0.1: clients run on threads of
// their own, with blocking sockets, and tell the loop they are done through a pipe.
namespace tandem::metrics {
namespace {

int connectTo(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void sendAll(int fd, const std::string& s) {
  size_t at = 0;
  while (at < s.size()) {
    ssize_t n = ::send(fd, s.data() + at, s.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;
    at += static_cast<size_t>(n);
  }
}

std::string readToEof(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// One request on a fresh connection, the whole answer read.
std::string exchange(uint16_t port, const std::string& request) {
  int fd = connectTo(port);
  if (fd < 0) return "connect failed";
  sendAll(fd, request);
  std::string answer = readToEof(fd);
  ::close(fd);
  return answer;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = loop::QbDispatcher::create();
    ASSERT_TRUE(d) << d.error().message;
    dispatcher_ = std::move(*d);
    ASSERT_EQ(::pipe2(done_, O_CLOEXEC | O_NONBLOCK), 0);
  }
  void TearDown() override {
    server_.reset();
    watch_.reset();
    ::close(done_[0]);
    ::close(done_[1]);
  }

  void listen(HttpLimits limits = {}) {
    auto s = HttpServer::listen(
        *dispatcher_, *IpAddress::parse("127.0.0.1"), 0,
        [this](Format f) {
          ++scrapes_;
          return body_ + (f == Format::kOpenMetrics ? "# EOF\n" : "");
        },
        [this](LogLevel, const std::string& line) { logged_.push_back(line); }, limits);
    ASSERT_TRUE(s) << s.error().message;
    server_ = std::move(*s);
  }

  // Runs the loop while client runs on a thread; stops when it returns.
  void runClient(const std::function<void()>& client) {
    auto w = dispatcher_->watchFd(done_[0], {true, false}, [this](loop::FdEvents) {
      char c;
      while (::read(done_[0], &c, 1) > 0) {
      }
      dispatcher_->stop();
    });
    ASSERT_TRUE(w);
    watch_ = std::move(*w);
    std::thread t([&] {
      client();
      char c = 'x';
      (void)!::write(done_[1], &c, 1);
    });
    dispatcher_->run();
    t.join();
  }

  std::unique_ptr<loop::QbDispatcher> dispatcher_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<loop::FdWatch> watch_;
  int done_[2] = {-1, -1};
  std::string body_ = "tandem_epoch 7\n";
  std::atomic<int> scrapes_{0};
  std::vector<std::string> logged_;
};

TEST_F(HttpServerTest, AnswersAScrapeInTheFormatAskedForAndCloses) {
  listen();
  std::string text, openmetrics;
  runClient([&] {
    text = exchange(server_->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    openmetrics = exchange(server_->port(),
                           "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text; "
                           "version=1.0.0\r\n\r\n");
  });
  EXPECT_EQ(text,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
            "Content-Length: 15\r\nConnection: close\r\n\r\ntandem_epoch 7\n");
  EXPECT_NE(openmetrics.find("application/openmetrics-text"), std::string::npos);
  EXPECT_NE(openmetrics.find("\r\n\r\ntandem_epoch 7\n# EOF\n"), std::string::npos);
  EXPECT_EQ(scrapes_, 2);
  EXPECT_EQ(server_->served(), 2u);
  EXPECT_EQ(server_->connections(), 0u);
}

TEST_F(HttpServerTest, ARequestInPiecesIsAnsweredOnceWhole) {
  listen();
  std::string answer;
  runClient([&] {
    int fd = connectTo(server_->port());
    sendAll(fd, "GET /met");
    sendAll(fd, "rics HTTP/1.1\r\nHo");
    sendAll(fd, "st: x\r\n\r\n");
    answer = readToEof(fd);
    ::close(fd);
  });
  EXPECT_EQ(answer.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(scrapes_, 1);
}

TEST_F(HttpServerTest, AnAnswerLargerThanTheSocketBufferArrivesWhole) {
  body_.clear();
  for (int i = 0; body_.size() < 8u << 20; ++i) {
    body_ += "tandem_ipvs_active_connections{vs=\"www\",rs=\"198.51.100." +
             std::to_string(i % 250) + ":80\"} " + std::to_string(i) + "\n";
  }
  listen();
  std::string answer;
  runClient([&] {
    // 8 MiB: twice the most the kernel lets a TCP send buffer grow to (tcp_wmem), so the answer
    // goes out over several writable events.
    int fd = connectTo(server_->port());
    sendAll(fd, "GET /metrics HTTP/1.1\r\n\r\n");
    answer = readToEof(fd);
    ::close(fd);
  });
  const size_t head = answer.find("\r\n\r\n");
  ASSERT_NE(head, std::string::npos);
  EXPECT_EQ(answer.substr(head + 4), body_);
}

TEST_F(HttpServerTest, GarbageIsRefusedWithAReasonAndTheServerGoesOn) {
  listen();
  std::string bad, good;
  runClient([&] {
    bad = exchange(server_->port(), "\x16\x03\x01 hello\r\n\r\n");
    good = exchange(server_->port(), "GET /metrics HTTP/1.1\r\n\r\n");
  });
  EXPECT_EQ(bad.substr(0, 24), "HTTP/1.1 400 Bad Request");
  EXPECT_NE(bad.find("not \"METHOD TARGET HTTP/1.x\""), std::string::npos);
  EXPECT_EQ(good.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(scrapes_, 1);
}

TEST_F(HttpServerTest, AClientThatNeverFinishesItsRequestIsClosedAtTheTimeout) {
  listen(HttpLimits{16, Millis(200), Millis(1000)});
  std::string answer = "not closed";
  runClient([&] {
    int fd = connectTo(server_->port());
    sendAll(fd, "GET /metrics HTTP/1.1\r\n");  // and nothing more
    answer = readToEof(fd);                    // returns when the server closes
    ::close(fd);
  });
  EXPECT_EQ(answer, "");
  EXPECT_EQ(scrapes_, 0);
  EXPECT_EQ(server_->connections(), 0u);
}

TEST_F(HttpServerTest, BeyondTheLimitANewScrapeTakesThePlaceOfTheOldestUnfinishedRequest) {
  // Request timeout an hour: without the eviction the scrape would wait for it.
  listen(HttpLimits{2, Millis(3600 * 1000), Millis(1000)});
  std::string third;
  std::string first_after;
  std::string second_after = "open";
  runClient([&] {
    // Two slow clients take both places, each with half a request; a scrape is still served.
    int a = connectTo(server_->port());
    sendAll(a, "GET /metrics HTTP/1.1\r\n");
    int b = connectTo(server_->port());
    sendAll(b, "GET /metrics HTTP/1.1\r\n");
    third = exchange(server_->port(), "GET /metrics HTTP/1.1\r\n\r\n");
    first_after = readToEof(a);  // the oldest was closed to make room: EOF, no answer
    char byte = 0;
    if (::recv(b, &byte, 1, MSG_DONTWAIT) == 0) second_after = "closed";
    ::close(a);
    ::close(b);
  });
  EXPECT_EQ(third.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(first_after, "");
  EXPECT_EQ(second_after, "open") << "only the oldest unfinished request makes room";
  EXPECT_EQ(server_->evicted(), 1u);
  ASSERT_FALSE(logged_.empty());
  EXPECT_NE(logged_.back().find("closed the oldest unfinished request, from 127.0.0.1:"),
            std::string::npos)
      << logged_.back();
}

TEST_F(HttpServerTest, FiftySlowClientsDoNotShutOutAScrape) {
  listen(HttpLimits{16, Millis(3600 * 1000), Millis(1000)});
  std::string answer;
  runClient([&] {
    std::vector<int> slow;
    for (int i = 0; i < 50; ++i) {
      int fd = connectTo(server_->port());
      if (fd >= 0) sendAll(fd, "G");
      slow.push_back(fd);
    }
    answer = exchange(server_->port(), "GET /metrics HTTP/1.1\r\n\r\n");
    for (int fd : slow) ::close(fd);
  });
  EXPECT_EQ(answer.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_GE(server_->evicted(), 35u) << "16 places for 51 clients";
}

TEST_F(HttpServerTest, WhileEveryPlaceIsBeingAnsweredNewConnectionsWait) {
  // A client that reads nothing keeps its answer unsent (the body is larger than the socket
  // buffers), so its place is not taken away: the next connection waits for the write timeout.
  body_ = std::string(8 * 1024 * 1024, 'x');
  listen(HttpLimits{1, Millis(3600 * 1000), Millis(300)});
  std::string second;
  runClient([&] {
    int a = connectTo(server_->port());
    sendAll(a, "GET /metrics HTTP/1.1\r\n\r\n");
    char head[64];
    (void)!::read(a, head, sizeof head);  // its answer has begun; the rest is never read
    second = exchange(server_->port(), "GET /metrics HTTP/1.1\r\n\r\n");
    ::close(a);
  });
  EXPECT_EQ(second.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(server_->evicted(), 0u);
}

TEST_F(HttpServerTest, AClientThatHalfClosesAfterItsRequestIsStillAnswered) {
  listen();
  std::string answer;
  runClient([&] {
    int fd = connectTo(server_->port());
    sendAll(fd, "GET /metrics HTTP/1.1\r\n\r\n");
    ::shutdown(fd, SHUT_WR);  // as `nc -N` does: the request, then EOF
    answer = readToEof(fd);
    ::close(fd);
  });
  EXPECT_EQ(answer.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(server_->connections(), 0u);
}

TEST_F(HttpServerTest, AClientThatKeepsSendingAfterItsAnswerIsCutOffAndOthersAreServed) {
  listen();
  std::string next;
  size_t sent = 0;
  constexpr size_t kJunk = 16u << 20;  // more than the kernel's socket buffers hold (10 MiB)
  runClient([&] {
    int fd = connectTo(server_->port());
    sendAll(fd, "GET /metrics HTTP/1.1\r\n\r\n");
    // The server drops at most 1 MiB after the answer, then closes: the sends fail before all
    // of it is out.
    const std::string junk(64 * 1024, 'x');
    while (sent < kJunk) {
      ssize_t n = ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    ::close(fd);
    next = exchange(server_->port(), "GET /metrics HTTP/1.1\r\n\r\n");
  });
  EXPECT_LT(sent, kJunk) << "the server read everything a client sent after its answer";
  EXPECT_EQ(next.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(server_->connections(), 0u);
  EXPECT_EQ(server_->served(), 2u);
}

TEST_F(HttpServerTest, ListeningOnATakenPortFailsNamingIt) {
  listen();
  auto second = HttpServer::listen(
      *dispatcher_, *IpAddress::parse("127.0.0.1"), server_->port(),
      [](Format) { return std::string(); }, nullptr);
  ASSERT_FALSE(second);
  EXPECT_NE(
      second.error().message.find("cannot listen on 127.0.0.1:" + std::to_string(server_->port()) +
                                  " for the metrics (metrics.listen)"),
      std::string::npos)
      << second.error().message;
}

}  // namespace
}  // namespace tandem::metrics
