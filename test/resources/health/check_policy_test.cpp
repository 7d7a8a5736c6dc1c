// The shared check policy: rise and fall, the three initial states, a flapping server damped,
// the windows of the reference, and the spread of first checks. Pure.
#include "health/check_policy.h"

#include <gtest/gtest.h>

#include <set>

namespace tandem::resources::health {
namespace {

using config::InitialHealth;
using namespace std::chrono_literals;

TEST(RiseFall, AnUpServerGoesDownAfterFallFailuresInARow) {
  RiseFall s(2, 3, InitialHealth::kUp);
  EXPECT_TRUE(s.up());
  EXPECT_TRUE(s.fresh());
  EXPECT_FALSE(s.record(false));
  EXPECT_FALSE(s.record(false));
  EXPECT_TRUE(s.up());
  EXPECT_TRUE(s.record(false)) << "the third failure in a row";
  EXPECT_FALSE(s.up());
  EXPECT_FALSE(s.fresh());
}

TEST(RiseFall, ASuccessBetweenFailuresStartsTheCountAgain) {
  RiseFall s(2, 3, InitialHealth::kUp);
  s.record(false);
  s.record(false);
  EXPECT_EQ(s.streak(), 2);
  EXPECT_FALSE(s.record(true));
  EXPECT_EQ(s.streak(), 0);
  EXPECT_FALSE(s.record(false));
  EXPECT_FALSE(s.record(false));
  EXPECT_TRUE(s.up());
}

TEST(RiseFall, ADownServerComesBackAfterRiseSuccessesInARow) {
  RiseFall s(2, 1, InitialHealth::kUp);
  ASSERT_TRUE(s.record(false));
  EXPECT_FALSE(s.record(true));
  EXPECT_FALSE(s.up());
  EXPECT_TRUE(s.record(true));
  EXPECT_TRUE(s.up());
}

TEST(RiseFall, InitialDownNeedsOneSuccessTheFirstTimeOnly) {
  RiseFall s(3, 2, InitialHealth::kDown);
  EXPECT_FALSE(s.up());
  EXPECT_FALSE(s.record(false)) << "already down";
  EXPECT_TRUE(s.record(true)) << "one success puts a server that starts down up";
  EXPECT_TRUE(s.up());
  s.record(false);
  ASSERT_TRUE(s.record(false));
  EXPECT_FALSE(s.record(true)) << "after that, rise successes as for any server";
  EXPECT_FALSE(s.record(true));
  EXPECT_TRUE(s.record(true));
}

TEST(RiseFall, InitialRiseNeedsRiseSuccesses) {
  RiseFall s(3, 2, InitialHealth::kDownUntilRise);
  EXPECT_FALSE(s.up());
  EXPECT_FALSE(s.record(true));
  EXPECT_FALSE(s.record(true));
  EXPECT_TRUE(s.record(true));
  EXPECT_TRUE(s.up());
}

TEST(RiseFall, AServerThatFlapsFasterThanRiseAllowsStaysDown) {
  RiseFall s(2, 1, InitialHealth::kUp);
  ASSERT_TRUE(s.record(false));
  int changes = 0;
  for (int i = 0; i < 20; ++i) changes += s.record(i % 2 == 0) ? 1 : 0;
  EXPECT_EQ(changes, 0);
  EXPECT_FALSE(s.up());
}

TEST(CheckPolicy, WindowsAreTheDocumentedFormula) {
  config::Check c;  // interval 2 s, timeout 1 s, rise 2, fall 3
  EXPECT_EQ(failureWindow(c), 7000ms) << "1 s x 3 + 2 s x 2";
  EXPECT_EQ(successWindow(c), 4000ms) << "1 s x 2 + 2 s x 1";
  c.fall = 1;
  c.timeout = 300ms;
  EXPECT_EQ(failureWindow(c), 300ms);
}

TEST(CheckPolicy, StartOffsetsSpreadOverOneInterval) {
  std::set<int64_t> seen;
  for (uint32_t r = 0; r <= 0xffff; r += 257) {
    const Millis o = startOffset(2000ms, static_cast<uint16_t>(r));
    EXPECT_GE(o, 0ms);
    EXPECT_LT(o, 2000ms);
    seen.insert(o.count());
  }
  EXPECT_GT(seen.size(), 200u);
  EXPECT_EQ(startOffset(2000ms, 0), 0ms);
  EXPECT_EQ(startOffset(2000ms, 0xffff), 1999ms);
}

TEST(CheckPolicy, SlowStartGivesTheShareOfTheRampElapsedAtLeastOne) {
  EXPECT_EQ(slowStartWeight(10, 0ms, 10s), 1);
  EXPECT_EQ(slowStartWeight(10, 1999ms, 10s), 1);
  EXPECT_EQ(slowStartWeight(10, 5s, 10s), 5);
  EXPECT_EQ(slowStartWeight(10, 9999ms, 10s), 9);
  EXPECT_EQ(slowStartWeight(10, 10s, 10s), 10);
  EXPECT_EQ(slowStartWeight(10, 1h, 10s), 10);
  EXPECT_EQ(slowStartWeight(100, 30s, 1min), 50);
  EXPECT_EQ(slowStartWeight(10, 0ms, 0ms), 10) << "no ramp";
  EXPECT_EQ(slowStartWeight(0, 0ms, 10s), 0) << "weight 0 stays 0";
  EXPECT_EQ(slowStartStep(10s), 1s);
  EXPECT_EQ(slowStartStep(1s), kSlowStartMinStep);
}

}  // namespace
}  // namespace tandem::resources::health
