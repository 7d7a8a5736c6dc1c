// The libqb dispatcher against the real kernel: timerfds, pipes and signals. Timers here are a
// few milliseconds of real time and nothing sleeps; a guard timer stops a loop that would
// otherwise hang, and fails the test.
#include "loop/qb_dispatcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <functional>
#include <numeric>
#include <random>
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

// A timer's deadline as well as the test can know it: arm() reads the clock between the two
// reads here, so its deadline lies within [earliest, latest]. A loaded machine may stall the
// test between two arms for longer than the gap between their delays; the order the deadlines
// really have is then judged from these bounds, not from the delays alone.
struct ArmedAt {
  int id;
  MonoTime earliest;
  MonoTime latest;
};

ArmedAt armAndNote(const Dispatcher& d, Timer& timer, Millis delay, int id) {
  const MonoTime before = d.now();
  timer.arm(delay);
  return {id, before + delay, d.now() + delay};
}

// Each timer fired no earlier than every one whose deadline was surely before its own, and
// all fired. Returns how many consecutive pairs had deadlines surely in order, so that a test
// can insist the check was not vacuous.
int expectFiredInDeadlineOrder(const std::vector<int>& fired, const std::vector<ArmedAt>& armed) {
  EXPECT_EQ(fired.size(), armed.size());
  auto find = [&](int id) {
    return *std::find_if(armed.begin(), armed.end(), [id](const ArmedAt& a) { return a.id == id; });
  };
  int decided = 0;
  for (size_t i = 1; i < fired.size(); ++i) {
    const ArmedAt before = find(fired[i - 1]);
    const ArmedAt after = find(fired[i]);
    EXPECT_FALSE(after.latest < before.earliest)
        << "timer " << after.id << " was due before timer " << before.id << " but fired after it";
    if (before.latest < after.earliest) ++decided;
  }
  return decided;
}

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
  auto fire = [&](int id) {
    fired.push_back(id);
    if (fired.size() == 3) dispatcher_->stop();
  };
  auto a = dispatcher_->createTimer([&] {
    last_fired = dispatcher_->now();
    fire(1);
  });
  auto b = dispatcher_->createTimer([&] { fire(2); });
  auto c = dispatcher_->createTimer([&] { fire(3); });
  std::vector<ArmedAt> armed;
  armed.push_back(armAndNote(*dispatcher_, *a, 30ms, 1));
  armed.push_back(armAndNote(*dispatcher_, *b, 10ms, 2));
  armed.push_back(armAndNote(*dispatcher_, *c, 20ms, 3));

  runUntilStopped();

  // {2, 3, 1} unless a stall of over 10 ms between two arms moved the deadlines.
  expectFiredInDeadlineOrder(fired, armed);
  EXPECT_GE(last_fired - start, 30ms);
  EXPECT_FALSE(a->armed());
}

TEST_F(QbDispatcherTest, ManyTimersFireInDeadlineOrderWhateverTheArmOrder) {
  // Delays 3 ms apart, armed in a shuffled order. On a quiet machine arming all 50 takes far
  // less than 3 ms and the deadlines are in delay order; under load (CI runs this beside a VM
  // and a compiler) a stall between two arms can invert two deadlines, so the order is judged
  // from each deadline's bounds.
  constexpr int kTimers = 50;
  std::vector<int> order(kTimers);
  std::iota(order.begin(), order.end(), 1);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  std::vector<int> fired;
  std::vector<std::unique_ptr<Timer>> timers;
  std::vector<ArmedAt> armed;
  for (int k : order) {
    timers.push_back(dispatcher_->createTimer([&, k] {
      fired.push_back(k);
      if (static_cast<int>(fired.size()) == kTimers) dispatcher_->stop();
    }));
    armed.push_back(armAndNote(*dispatcher_, *timers.back(), Millis(3 * k), k));
  }

  runUntilStopped();

  const int decided = expectFiredInDeadlineOrder(fired, armed);
  // Most neighbours' deadlines are surely apart (all 49 on a quiet machine): the check above
  // judged the order, not a run of overlapping bounds.
  EXPECT_GE(decided, kTimers / 2);
}

TEST_F(QbDispatcherTest, TimersWithTheSameDelayFireInArmOrder) {
  for (Millis delay : {Millis(0), Millis(5)}) {
    constexpr int kTimers = 100;
    std::vector<int> fired;
    std::vector<std::unique_ptr<Timer>> timers;
    for (int i = 0; i < kTimers; ++i) {
      timers.push_back(dispatcher_->createTimer([&, i] {
        fired.push_back(i);
        if (static_cast<int>(fired.size()) == kTimers) dispatcher_->stop();
      }));
    }
    for (auto& t : timers) t->arm(delay);

    runUntilStopped();

    std::vector<int> expected(kTimers);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(fired, expected) << "delay " << delay.count() << " ms";
  }
}

// Waits on the clock (not the loop) until every timer armed so far is due, so that the loop's
// first round finds them all due together.
void waitUntil(const QbDispatcher& d, MonoTime t) {
  while (d.now() < t) {
  }
}

TEST_F(QbDispatcherTest, ATimerCancelledOrDestroyedByAnotherDueInTheSameRoundDoesNotFire) {
  int cancelled_fired = 0;
  int destroyed_fired = 0;
  int first_fired = 0;
  std::unique_ptr<Timer> cancelled = dispatcher_->createTimer([&] { ++cancelled_fired; });
  std::unique_ptr<Timer> destroyed = dispatcher_->createTimer([&] { ++destroyed_fired; });
  auto first = dispatcher_->createTimer([&] {
    ++first_fired;
    EXPECT_TRUE(cancelled->armed());
    cancelled->cancel();
    destroyed.reset();
  });
  auto end = dispatcher_->createTimer([&] { dispatcher_->stop(); });
  const MonoTime start = dispatcher_->now();
  first->arm(1ms);
  cancelled->arm(2ms);
  destroyed->arm(2ms);
  end->arm(3ms);
  waitUntil(*dispatcher_, start + 10ms);

  runUntilStopped();

  EXPECT_EQ(first_fired, 1);
  EXPECT_EQ(cancelled_fired, 0);
  EXPECT_EQ(destroyed_fired, 0);
  EXPECT_FALSE(cancelled->armed());
}

TEST_F(QbDispatcherTest, ATimerArmedByAnotherAtAnEarlierDeadlineStillFires) {
  // The timerfd is set for the later timer's deadline; arming an earlier one must move it.
  std::vector<int> fired;
  auto late = dispatcher_->createTimer([&] {
    fired.push_back(2);
    dispatcher_->stop();
  });
  auto early = dispatcher_->createTimer([&] { fired.push_back(1); });
  auto arm_early = dispatcher_->createTimer([&] { early->arm(5ms); });
  late->arm(300ms);
  arm_early->arm(1ms);
  const MonoTime start = dispatcher_->now();

  runUntilStopped();

  EXPECT_EQ(fired, (std::vector<int>{1, 2}));
  EXPECT_GE(dispatcher_->now() - start, 300ms);
}

// Two pipes with a byte to read in each and a watch on each read end, set up before the loop
// runs so that both events come in the loop's first batch.
struct TwoReadablePipes {
  void watch(Dispatcher& d, std::function<void(FdEvents)> on_first,
             std::function<void(FdEvents)> on_second) {
    auto a = d.watchFd(first.fds[0], FdEvents{true, false}, std::move(on_first));
    auto b = d.watchFd(second.fds[0], FdEvents{true, false}, std::move(on_second));
    ASSERT_TRUE(a.has_value() && b.has_value());
    first_watch = std::move(*a);
    second_watch = std::move(*b);
    ASSERT_EQ(::write(first.fds[1], "x", 1), 1);
    ASSERT_EQ(::write(second.fds[1], "x", 1), 1);
  }
  Pipe first;
  Pipe second;
  std::unique_ptr<FdWatch> first_watch;
  std::unique_ptr<FdWatch> second_watch;
};

TEST_F(QbDispatcherTest, ACallbackMayDestroyItsOwnWatchAndAnotherWithAnEventPending) {
  // Whichever runs first destroys both watches: the other must not run (under ASan, nothing
  // may touch the destroyed entries either).
  TwoReadablePipes pipes;
  int calls = 0;
  auto on_ready = [&](FdEvents) {
    ++calls;
    pipes.first_watch.reset();
    pipes.second_watch.reset();
  };
  pipes.watch(*dispatcher_, on_ready, on_ready);
  auto end = dispatcher_->createTimer([&] { dispatcher_->stop(); });
  end->arm(30ms);

  runUntilStopped();

  EXPECT_EQ(calls, 1);
}

TEST_F(QbDispatcherTest, AWatchReplacedDuringABatchDoesNotGetTheOldWatchsEvent) {
  TwoReadablePipes pipes;
  int old_calls = 0;
  int new_calls = 0;
  // Destroys both watches and watches the other fd anew, for writability only, which a pipe's
  // read end never has: the other fd's readable event, already in this batch, was for the old
  // watch and must not reach the new one.
  auto replace = [&](int other_fd, std::unique_ptr<FdWatch>& own, std::unique_ptr<FdWatch>& other) {
    ++old_calls;
    own.reset();
    other.reset();
    auto again =
        dispatcher_->watchFd(other_fd, FdEvents{false, true}, [&](FdEvents) { ++new_calls; });
    ASSERT_TRUE(again.has_value()) << again.error().message;
    other = std::move(*again);
  };
  int fd1 = pipes.first.fds[0];
  int fd2 = pipes.second.fds[0];
  pipes.watch(
      *dispatcher_, [&](FdEvents) { replace(fd2, pipes.first_watch, pipes.second_watch); },
      [&](FdEvents) { replace(fd1, pipes.second_watch, pipes.first_watch); });
  auto end = dispatcher_->createTimer([&] { dispatcher_->stop(); });
  end->arm(30ms);

  runUntilStopped();

  EXPECT_EQ(old_calls, 1);
  EXPECT_EQ(new_calls, 0);
}

TEST_F(QbDispatcherTest, TenThousandWatchesAndTimersComeAndGo) {
  // A functional check at the scale of 10,000 probes in flight, not a timing one.
  constexpr int kCount = 10'000;
  rlimit lim{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &lim), 0);
  if (lim.rlim_cur < kCount + 100) {
    lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, kCount + 100);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lim), 0);
  }
  ASSERT_GE(lim.rlim_cur, static_cast<rlim_t>(kCount + 100)) << "RLIMIT_NOFILE hard limit";
  std::vector<int> fds;
  std::vector<std::unique_ptr<FdWatch>> watches(kCount);
  std::vector<std::unique_ptr<Timer>> timers(kCount);
  int reads = 0;
  int fires = 0;
  int live_watches = 0;
  int live_timers = 0;
  auto maybeStop = [&] {
    if (reads == live_watches && fires == live_timers) dispatcher_->stop();
  };
  for (int i = 0; i < kCount; ++i) {
    int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    auto w = dispatcher_->watchFd(fd, FdEvents{true, false}, [&, i, fd](FdEvents ready) {
      EXPECT_TRUE(ready.readable);
      uint64_t v = 0;
      EXPECT_EQ(::read(fd, &v, sizeof v), static_cast<ssize_t>(sizeof v));
      ++reads;
      watches[static_cast<size_t>(i)].reset();
      maybeStop();
    });
    ASSERT_TRUE(w.has_value()) << w.error().message;
    watches[static_cast<size_t>(i)] = std::move(*w);
    timers[static_cast<size_t>(i)] = dispatcher_->createTimer([&, i] {
      ++fires;
      timers[static_cast<size_t>(i)].reset();
      maybeStop();
    });
    timers[static_cast<size_t>(i)]->arm(Millis(i % 20));
  }
  // Every third watch and every fifth timer goes before the loop runs.
  for (int i = 0; i < kCount; ++i) {
    if (i % 3 == 0) watches[static_cast<size_t>(i)].reset();
    if (i % 5 == 0) timers[static_cast<size_t>(i)].reset();
  }
  for (int i = 0; i < kCount; ++i) {
    if (watches[static_cast<size_t>(i)]) ++live_watches;
    if (timers[static_cast<size_t>(i)]) ++live_timers;
    uint64_t one = 1;
    ASSERT_EQ(::write(fds[static_cast<size_t>(i)], &one, sizeof one),
              static_cast<ssize_t>(sizeof one));
  }

  runUntilStopped();

  EXPECT_EQ(reads, live_watches);
  EXPECT_EQ(fires, live_timers);
  EXPECT_TRUE(std::all_of(watches.begin(), watches.end(), [](auto& w) { return !w; }));
  EXPECT_TRUE(std::all_of(timers.begin(), timers.end(), [](auto& t) { return !t; }));
  // The fds are free to be watched again.
  auto again = dispatcher_->watchFd(fds[0], FdEvents{true, false}, [](FdEvents) {});
  EXPECT_TRUE(again.has_value());
  again->reset();
  for (int fd : fds) ::close(fd);
}

TEST_F(QbDispatcherTest, DestroyingTheDispatcherWithLiveWatchesAndTimersIsSafe) {
  Pipe p;
  auto watch = dispatcher_->watchFd(p.fds[0], FdEvents{true, false}, [](FdEvents) {});
  ASSERT_TRUE(watch.has_value());
  auto timer = dispatcher_->createTimer([] {});
  timer->arm(1s);
  guard_.reset();

  dispatcher_.reset();

  EXPECT_FALSE(timer->armed());
  timer.reset();
  watch->reset();
}

TEST_F(QbDispatcherTest, AZeroDelayTimerStillFires) {
  // A zero it_value would disarm a timerfd; the dispatcher must not pass one through. And "as
  // soon as possible" is from the loop, never inside arm().
  bool fired = false;
  auto t = dispatcher_->createTimer([&] {
    fired = true;
    dispatcher_->stop();
  });
  t->arm(0ms);
  EXPECT_FALSE(fired);
  EXPECT_TRUE(t->armed());

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
