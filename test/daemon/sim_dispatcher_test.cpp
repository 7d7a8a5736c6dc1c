// The simulated dispatcher is what every daemon test stands on, so its timer order is pinned.
#include "fakes/sim_dispatcher.h"

#include <gtest/gtest.h>

#include <vector>

namespace tandem::fakes {
namespace {

using namespace std::chrono_literals;

TEST(SimDispatcher, FiresTimersInDeadlineOrderSeeingTheirOwnDeadline) {
  SimDispatcher sim;
  const loop::MonoTime start = sim.now();
  std::vector<std::pair<int, Millis>> fired;
  auto record = [&](int id) {
    return
        [&, id] { fired.emplace_back(id, std::chrono::duration_cast<Millis>(sim.now() - start)); };
  };
  auto a = sim.createTimer(record(1));
  auto b = sim.createTimer(record(2));
  auto c = sim.createTimer(record(3));
  a->arm(30ms);
  b->arm(10ms);
  c->arm(20ms);

  sim.advance(25ms);
  EXPECT_EQ(fired, (std::vector<std::pair<int, Millis>>{{2, 10ms}, {3, 20ms}}));
  EXPECT_EQ(sim.now() - start, 25ms);
  sim.advance(5ms);
  EXPECT_EQ(fired.back(), (std::pair<int, Millis>{1, 30ms}));
}

TEST(SimDispatcher, TimersDueTogetherFireInTheOrderTheyWereArmed) {
  SimDispatcher sim;
  std::vector<int> fired;
  auto a = sim.createTimer([&] { fired.push_back(1); });
  auto b = sim.createTimer([&] { fired.push_back(2); });
  b->arm(10ms);
  a->arm(10ms);

  sim.advance(10ms);

  EXPECT_EQ(fired, (std::vector<int>{2, 1}));
}

TEST(SimDispatcher, ReArmingFromTheCallbackMakesAPeriodicTimer) {
  SimDispatcher sim;
  int fired = 0;
  std::unique_ptr<loop::Timer> t;
  t = sim.createTimer([&] {
    ++fired;
    t->arm(100ms);
  });
  t->arm(100ms);

  sim.advance(1s);

  EXPECT_EQ(fired, 10);
  EXPECT_TRUE(t->armed());
}

TEST(SimDispatcher, CancelledAndDestroyedTimersDoNotFire) {
  SimDispatcher sim;
  int fired = 0;
  auto a = sim.createTimer([&] { ++fired; });
  auto b = sim.createTimer([&] { ++fired; });
  a->arm(10ms);
  b->arm(10ms);
  a->cancel();
  b.reset();

  sim.advance(1s);

  EXPECT_EQ(fired, 0);
  EXPECT_FALSE(a->armed());
}

TEST(SimDispatcher, DeliversSignalsOnlyWhileWatched) {
  SimDispatcher sim;
  int hups = 0;
  auto watch = sim.onSignal(loop::Signal::kHangup, [&] { ++hups; });
  ASSERT_TRUE(watch.has_value());

  EXPECT_TRUE(sim.deliver(loop::Signal::kHangup));
  EXPECT_FALSE(sim.deliver(loop::Signal::kTerminate));
  watch->reset();
  EXPECT_FALSE(sim.deliver(loop::Signal::kHangup));
  EXPECT_EQ(hups, 1);
}

}  // namespace
}  // namespace tandem::fakes
