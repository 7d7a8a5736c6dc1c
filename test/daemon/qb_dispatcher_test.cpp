// The libqb dispatcher against the real kernel: timerfds, pipes and signals. Timers here are a
// few milliseconds of real time and nothing sleeps; a guard timer stops a loop that would
// otherwise hang, and fails the test.
#include "loop/qb_dispatcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <vector>

namespace tandem::loop {
namespace {

using namespace std::chrono_literals;

class QbDispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = QbDispatcher::create();
    ASSERT_TRUE(d.has_value()) << d.error().message;
    dispatcher_ = std::move(*d);
    guard_ = dispatcher_->createTimer([this] {
      guard_fired_ = true;
      dispatcher_->stop();
    });
  }

  // Runs the loop until a callback stops it, failing after 5 s.
  void runUntilStopped() {
    guard_->arm(5s);
    dispatcher_->run();
    guard_->cancel();
    EXPECT_FALSE(guard_fired_) << "the loop was not stopped by the test's callbacks";
  }

  void TearDown() override {
    guard_.reset();
    dispatcher_.reset();
  }

  std::unique_ptr<QbDispatcher> dispatcher_;
  std::unique_ptr<Timer> guard_;
  bool guard_fired_ = false;
};

struct Pipe {
  Pipe() { EXPECT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0); }
  ~Pipe() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  void closeWriteEnd() {
    ::close(fds[1]);
    fds[1] = -1;
  }
  int fds[2] = {-1, -1};
};

TEST_F(QbDispatcherTest, TimersFireInDeadlineOrderNoEarlierThanArmed) {
  std::vector<int> fired;
  const MonoTime start = dispatcher_->now();
  MonoTime last_fired{};
  auto a = dispatcher_->createTimer([&] {
    fired.push_back(1);
    last_fired = dispatcher_->now();
    dispatcher_->stop();
  });
  auto b = dispatcher_->createTimer([&] { fired.push_back(2); });
  auto c = dispatcher_->createTimer([&] { fired.push_back(3); });
  a->arm(30ms);
  b->arm(10ms);
  c->arm(20ms);

  runUntilStopped();

  EXPECT_EQ(fired, (std::vector<int>{2, 3, 1}));
  EXPECT_GE(last_fired - start, 30ms);
  EXPECT_FALSE(a->armed());
}

TEST_F(QbDispatcherTest, AZeroDelayTimerStillFires) {
  // A zero it_value would disarm a timerfd; the dispatcher must not pass one through.
  bool fired = false;
  auto t = dispatcher_->createTimer([&] {
    fired = true;
    dispatcher_->stop();
  });
  t->arm(0ms);

  runUntilStopped();

  EXPECT_TRUE(fired);
}

TEST_F(QbDispatcherTest, CancelledTimerDoesNotFireAndReArmingMovesTheDeadline) {
  int cancelled_fired = 0;
  int moved_fired = 0;
  auto cancelled = dispatcher_->createTimer([&] { ++cancelled_fired; });
  auto moved = dispatcher_->createTimer([&] { ++moved_fired; });
  auto end = dispatcher_->createTimer([&] { dispatcher_->stop(); });
  cancelled->arm(5ms);
  cancelled->cancel();
  moved->arm(5ms);
  moved->arm(500ms);  // past the end: it must not fire at 5 ms any more
  end->arm(40ms);

  runUntilStopped();

  EXPECT_EQ(cancelled_fired, 0);
  EXPECT_EQ(moved_fired, 0);
  EXPECT_TRUE(moved->armed());
}

TEST_F(QbDispatcherTest, ATimerMayReArmOrDestroyItselfInItsCallback) {
  int ticks = 0;
  std::unique_ptr<Timer> periodic;
  periodic = dispatcher_->createTimer([&] {
    if (++ticks < 3) {
      periodic->arm(2ms);
    } else {
      periodic.reset();
      dispatcher_->stop();
    }
  });
  periodic->arm(2ms);

  runUntilStopped();

  EXPECT_EQ(ticks, 3);
  EXPECT_EQ(periodic, nullptr);
}

TEST_F(QbDispatcherTest, ReportsAReadableFd) {
  Pipe p;
  std::string got;
  auto watch = dispatcher_->watchFd(p.fds[0], FdEvents{true, false}, [&](FdEvents ready) {
    EXPECT_TRUE(ready.readable);
    char buf[16];
    ssize_t n = ::read(p.fds[0], buf, sizeof buf);
    if (n > 0) got.append(buf, static_cast<size_t>(n));
    dispatcher_->stop();
  });
  ASSERT_TRUE(watch.has_value()) << watch.error().message;
  ASSERT_EQ(::write(p.fds[1], "x", 1), 1);

  runUntilStopped();

  EXPECT_EQ(got, "x");
}

TEST_F(QbDispatcherTest, ReportsAHangUpAsReadableSoTheReadSeesEof) {
  Pipe p;
  ssize_t last_read = -2;
  auto watch = dispatcher_->watchFd(p.fds[0], FdEvents{true, false}, [&](FdEvents ready) {
    EXPECT_TRUE(ready.readable);
    char buf[16];
    last_read = ::read(p.fds[0], buf, sizeof buf);
    dispatcher_->stop();
  });
  ASSERT_TRUE(watch.has_value());
  p.closeWriteEnd();

  runUntilStopped();

  EXPECT_EQ(last_read, 0);
}

TEST_F(QbDispatcherTest, WatchesWritabilityOnlyWhenAskedTo) {
  Pipe p;
  int writable = 0;
  std::unique_ptr<FdWatch> w;
  auto watch = dispatcher_->watchFd(p.fds[1], FdEvents{false, false}, [&](FdEvents ready) {
    EXPECT_TRUE(ready.writable);
    ++writable;
    dispatcher_->stop();
  });
  ASSERT_TRUE(watch.has_value());
  w = std::move(*watch);
  auto enable = dispatcher_->createTimer([&] {
    EXPECT_EQ(writable, 0);
    w->setInterest(FdEvents{false, true});
  });
  enable->arm(20ms);

  runUntilStopped();

  EXPECT_EQ(writable, 1);
}

TEST_F(QbDispatcherTest, RefusesASecondWatchOnTheSameFd) {
  Pipe p;
  auto first = dispatcher_->watchFd(p.fds[0], FdEvents{true, false}, [](FdEvents) {});
  ASSERT_TRUE(first.has_value());

  auto second = dispatcher_->watchFd(p.fds[0], FdEvents{true, false}, [](FdEvents) {});

  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kAlreadyExists);
}

TEST_F(QbDispatcherTest, AWatchDestroyedInItsCallbackCanBeReplacedOnTheSameFd) {
  Pipe p;
  std::unique_ptr<FdWatch> watch;
  int first_calls = 0;
  int second_calls = 0;
  auto drain = [&] {
    char buf[16];
    while (::read(p.fds[0], buf, sizeof buf) > 0) {
    }
  };
  auto w = dispatcher_->watchFd(p.fds[0], FdEvents{true, false}, [&](FdEvents) {
    ++first_calls;
    drain();
    watch.reset();
    auto again = dispatcher_->watchFd(p.fds[0], FdEvents{true, false}, [&](FdEvents) {
      ++second_calls;
      drain();
      dispatcher_->stop();
    });
    ASSERT_TRUE(again.has_value()) << again.error().message;
    watch = std::move(*again);
    ASSERT_EQ(::write(p.fds[1], "y", 1), 1);
  });
  ASSERT_TRUE(w.has_value());
  watch = std::move(*w);
  ASSERT_EQ(::write(p.fds[1], "x", 1), 1);

  runUntilStopped();

  EXPECT_EQ(first_calls, 1);
  EXPECT_EQ(second_calls, 1);
}

TEST_F(QbDispatcherTest, DeliversASignalOnTheLoop) {
  int hups = 0;
  auto watch = dispatcher_->onSignal(Signal::kHangup, [&] {
    ++hups;
    dispatcher_->stop();
  });
  ASSERT_TRUE(watch.has_value()) << watch.error().message;
  auto raiser = dispatcher_->createTimer([] { ::raise(SIGHUP); });
  raiser->arm(1ms);

  runUntilStopped();

  EXPECT_EQ(hups, 1);
}

TEST_F(QbDispatcherTest, ASignalGetsItsDefaultActionBackWhenTheWatchGoes) {
  auto watch = dispatcher_->onSignal(Signal::kHangup, [] {});
  ASSERT_TRUE(watch.has_value());
  struct sigaction sa {};
  ASSERT_EQ(::sigaction(SIGHUP, nullptr, &sa), 0);
  EXPECT_NE(sa.sa_handler, SIG_DFL);

  watch->reset();

  ASSERT_EQ(::sigaction(SIGHUP, nullptr, &sa), 0);
  EXPECT_EQ(sa.sa_handler, SIG_DFL);
}

TEST_F(QbDispatcherTest, RefusesASecondWatchOnTheSameSignal) {
  auto first = dispatcher_->onSignal(Signal::kTerminate, [] {});
  ASSERT_TRUE(first.has_value());

  auto second = dispatcher_->onSignal(Signal::kTerminate, [] {});

  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kAlreadyExists);
}

TEST_F(QbDispatcherTest, AWriteToAClosedPipeFailsWithEpipeInsteadOfKilling) {
  // Adding a signal makes libqb reset every other disposition, SIGPIPE's included.
  auto watch = dispatcher_->onSignal(Signal::kTerminate, [] {});
  ASSERT_TRUE(watch.has_value());
  Pipe p;
  ::close(p.fds[0]);
  p.fds[0] = -1;

  errno = 0;
  EXPECT_EQ(::write(p.fds[1], "x", 1), -1);
  EXPECT_EQ(errno, EPIPE);
}

TEST_F(QbDispatcherTest, NowIsTheMonotonicClock) {
  timespec ts{};
  ASSERT_EQ(::clock_gettime(CLOCK_MONOTONIC, &ts), 0);
  auto mono = std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);

  auto diff = dispatcher_->now().time_since_epoch() - mono;

  EXPECT_LT(std::chrono::abs(diff), 1s);
}

}  // namespace
}  // namespace tandem::loop
