#include "wire/replay_guard.h"

#include <gtest/gtest.h>

namespace tandem::wire {
namespace {

constexpr uint64_t kRun1 = makeIncarnation(1700000000000, 0x1234);
constexpr uint64_t kRun2 = makeIncarnation(1700000005000, 0x0001);

static_assert(kRun2 > kRun1, "a later start orders after an earlier one, whatever the random");
static_assert(makeIncarnation(1700000000000, 1) != makeIncarnation(1700000000000, 2));
static_assert(incarnationStartMs(kRun1) == 1700000000000);

TEST(Incarnation, ARunStartsPastTheLastOneWhenTheClockSteppedBack) {
  const uint64_t an_hour_back = makeIncarnation(1700000000000 - 3600000, 9);
  EXPECT_EQ(nextIncarnation(kRun2, std::nullopt), kRun2) << "no record: the clock's";
  EXPECT_EQ(nextIncarnation(kRun2, kRun1), kRun2) << "the clock moved on: the clock's";
  EXPECT_EQ(nextIncarnation(an_hour_back, kRun1), kRun1 + 1);
  EXPECT_EQ(nextIncarnation(kRun1, kRun1), kRun1 + 1) << "the same ms and the same random";
  ReplayGuard g;
  ASSERT_EQ(g.admit("lb2", kRun1, 500), std::nullopt);
  EXPECT_EQ(g.admit("lb2", an_hour_back, 0), Rejection::kStaleIncarnation) << "the fault";
  EXPECT_EQ(g.admit("lb2", nextIncarnation(an_hour_back, kRun1), 0), std::nullopt) << "the fix";
  EXPECT_EQ(nextIncarnation(5, UINT64_MAX), 5u) << "no wrap past the last value";
}

TEST(ReplayGuard, FirstFrameFromASenderIsAccepted) {
  ReplayGuard g;
  EXPECT_EQ(g.admit("lb2", kRun1, 1000), std::nullopt);
  EXPECT_EQ(*g.window("lb2"), (ReplayWindow{kRun1, 1000, 1}));
}

TEST(ReplayGuard, ReplayOfAnAcceptedFrameIsReplayed) {
  ReplayGuard g;
  ASSERT_EQ(g.admit("lb2", kRun1, 1), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, 1), Rejection::kReplayed);
  ASSERT_EQ(g.admit("lb2", kRun1, 2), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, 1), Rejection::kReplayed);
  EXPECT_EQ(g.admit("lb2", kRun1, 2), Rejection::kReplayed);
}

TEST(ReplayGuard, OutOfOrderWithinTheWindowIsAcceptedOnce) {
  ReplayGuard g;
  ASSERT_EQ(g.admit("lb2", kRun1, 100), std::nullopt);
  ASSERT_EQ(g.admit("lb2", kRun1, 103), std::nullopt);  // the UDP copy overtook CPG
  EXPECT_EQ(g.admit("lb2", kRun1, 101), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, 102), std::nullopt);
  for (uint64_t s : {100, 101, 102, 103}) {
    EXPECT_EQ(g.admit("lb2", kRun1, s), Rejection::kReplayed) << s;
  }
}

TEST(ReplayGuard, WindowHoldsExactlySixtyFourSequences) {
  ReplayGuard g;
  ASSERT_EQ(g.admit("lb2", kRun1, 1000), std::nullopt);
  // top - 63 is the left edge, still inside; top - 64 is past it.
  EXPECT_EQ(g.check("lb2", kRun1, 1000 - 63), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, 1000 - 64), Rejection::kReplayed);
  EXPECT_EQ(g.admit("lb2", kRun1, 1000 - 63), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, 1000 - 63), Rejection::kReplayed);
}

TEST(ReplayGuard, FarBehindIsReplayed) {
  ReplayGuard g;
  ASSERT_EQ(g.admit("lb2", kRun1, 5000), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, 10), Rejection::kReplayed);
  EXPECT_EQ(g.admit("lb2", kRun1, 0), Rejection::kReplayed);
}

TEST(ReplayGuard, SlidingForwardForgetsWhatFellOffTheEdge) {
  ReplayGuard g;
  for (uint64_t s = 0; s < 64; ++s) ASSERT_EQ(g.admit("lb2", kRun1, s), std::nullopt);
  EXPECT_EQ(g.window("lb2")->seen, ~uint64_t{0});
  ASSERT_EQ(g.admit("lb2", kRun1, 64), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, 0), Rejection::kReplayed);  // now past the edge
  EXPECT_EQ(g.admit("lb2", kRun1, 1), Rejection::kReplayed);  // inside, seen
}

TEST(ReplayGuard, JumpsOfAWindowOrMoreStartAFreshBitmap) {
  for (uint64_t jump : {63u, 64u, 65u, 1000u}) {
    ReplayGuard g;
    ASSERT_EQ(g.admit("lb2", kRun1, 10), std::nullopt);
    ASSERT_EQ(g.admit("lb2", kRun1, 10 + jump), std::nullopt);
    // 9 + jump was never seen and is inside the window: accepted.
    EXPECT_EQ(g.admit("lb2", kRun1, 9 + jump), std::nullopt) << jump;
    EXPECT_EQ(g.admit("lb2", kRun1, 10), Rejection::kReplayed) << jump;
  }
}

TEST(ReplayGuard, HighestSequenceWorks) {
  ReplayGuard g;
  ASSERT_EQ(g.admit("lb2", kRun1, ~uint64_t{0} - 1), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, ~uint64_t{0}), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, ~uint64_t{0}), Rejection::kReplayed);
}

TEST(ReplayGuard, NewerIncarnationResetsTheWindow) {
  ReplayGuard g;
  ASSERT_EQ(g.admit("lb2", kRun1, 9000), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun2, 0), std::nullopt);  // restarted: counts from 0 again
  EXPECT_EQ(*g.window("lb2"), (ReplayWindow{kRun2, 0, 1}));
  EXPECT_EQ(g.admit("lb2", kRun2, 1), std::nullopt);
}

TEST(ReplayGuard, OlderIncarnationIsStale) {
  ReplayGuard g;
  ASSERT_EQ(g.admit("lb2", kRun2, 5), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, 9000), Rejection::kStaleIncarnation);
  EXPECT_EQ(g.window("lb2")->incarnation, kRun2);
}

TEST(ReplayGuard, SendersAreIndependent) {
  ReplayGuard g;
  ASSERT_EQ(g.admit("lb2", kRun2, 7), std::nullopt);
  EXPECT_EQ(g.admit("lb3", kRun1, 7), std::nullopt);
  EXPECT_EQ(g.admit("lb3", kRun1, 7), Rejection::kReplayed);
  EXPECT_EQ(g.size(), 2u);
}

TEST(ReplayGuard, CheckRecordsNothing) {
  ReplayGuard g;
  EXPECT_EQ(g.check("lb2", kRun1, 1), std::nullopt);
  EXPECT_EQ(g.size(), 0u);
  ASSERT_EQ(g.admit("lb2", kRun1, 1), std::nullopt);
  EXPECT_EQ(g.check("lb2", kRun1, 2), std::nullopt);
  EXPECT_EQ(g.admit("lb2", kRun1, 2), std::nullopt);
  EXPECT_EQ(g.check("lb2", kRun1, 2), Rejection::kReplayed);
  EXPECT_EQ(g.check("lb2", kRun1 - 1, 99), Rejection::kStaleIncarnation);
}

TEST(ReplayGuard, ForgottenSenderStartsOver) {
  ReplayGuard g;
  ASSERT_EQ(g.admit("lb2", kRun2, 5), std::nullopt);
  g.forget("lb2");
  EXPECT_EQ(g.window("lb2"), nullptr);
  EXPECT_EQ(g.admit("lb2", kRun1, 1), std::nullopt);  // the documented cost of forgetting
}

}  // namespace
}  // namespace tandem::wire
