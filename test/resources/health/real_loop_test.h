#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>

#include "common/ip_address.h"
#include "health/checker.h"
#include "loop/qb_dispatcher.h"

// What the checker tests on the real libqb loop share: a listening socket on loopback, and a
// fixture whose guard timer fails a test that would never stop the loop.
namespace tandem::test {

// A probe's time on the real loop is judged against its check's timeout only: a probe that
// concludes by itself does so before the timeout the tests configure by default (kCheckTimeout),
// and one that times out takes its timeout at least and at most that plus kLoadMargin, what a
// loaded machine (a sanitizer build beside a VM) may add before the loop runs the timer.
inline constexpr std::chrono::milliseconds kCheckTimeout{1000};
inline constexpr std::chrono::milliseconds kLoadMargin{1000};

// A listening socket on the loopback address of family, on a port the kernel picks.
struct LoopbackListener {
  explicit LoopbackListener(Family family, int backlog = 16, int flags = 0) {
    fd = ::socket(family == Family::kInet ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | flags,
                  0);
    EXPECT_GE(fd, 0) << std::strerror(errno);
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
  ~LoopbackListener() {
    if (fd >= 0) ::close(fd);
  }
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  int fd = -1;
  uint16_t port = 0;
  Endpoint endpoint;
};

class RealLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = loop::QbDispatcher::create();
    ASSERT_TRUE(d.has_value()) << d.error().message;
    loop_ = std::move(*d);
    guard_ = loop_->createTimer([this] {
      guard_fired_ = true;
      loop_->stop();
    });
  }
  void TearDown() override {
    guard_.reset();
    loop_.reset();
  }

  // Runs the loop until a callback stops it, or the guard after 30 s, which fails the test.
  void runLoop() {
    guard_->arm(std::chrono::seconds(30));  // a hang, not a slow machine
    loop_->run();
    guard_->cancel();
    EXPECT_FALSE(guard_fired_) << "the loop was never stopped: a probe that never ended?";
  }

  // One probe, the loop run until its result.
  resources::health::ProbeResult probeOnce(resources::health::Checker& checker,
                                           const resources::health::ProbeTarget& target) {
    std::optional<resources::health::ProbeResult> out;
    checker.probe(target, [&](resources::health::ProbeResult r) {
      out = std::move(r);
      loop_->stop();
    });
    EXPECT_FALSE(out) << "never before probe() returns";
    runLoop();
    return out.value_or(resources::health::ProbeResult{false, "no result", Millis(0)});
  }

  // Starts a probe, cancels it at once and runs the loop for `wait` (past the probe's
  // timeout): whether done was called, which it must not be.
  bool calledBackAfterCancel(resources::health::Checker& checker,
                             const resources::health::ProbeTarget& target, Millis wait) {
    bool called = false;
    checker.probe(target, [&](resources::health::ProbeResult) { called = true; });
    checker.cancel();
    auto stop = loop_->createTimer([this] { loop_->stop(); });
    stop->arm(wait);
    loop_->run();
    return called;
  }

  // One probe whose done destroys the checker, as an owner dropping it may: its result.
  resources::health::ProbeResult probeAndDestroy(
      std::unique_ptr<resources::health::Checker> checker,
      const resources::health::ProbeTarget& target) {
    std::optional<resources::health::ProbeResult> out;
    checker->probe(target, [&](resources::health::ProbeResult r) {
      out = std::move(r);
      checker.reset();
      loop_->stop();
    });
    runLoop();
    EXPECT_EQ(checker, nullptr) << "done was never called";
    return out.value_or(resources::health::ProbeResult{false, "no result", Millis(0)});
  }

  std::unique_ptr<loop::QbDispatcher> loop_;
  std::unique_ptr<loop::Timer> guard_;
  bool guard_fired_ = false;
};

}  // namespace tandem::test
