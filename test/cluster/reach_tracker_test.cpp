// The tiebreaker's verdict from rounds, on made-up times.
#include "ping/reach_tracker.h"

#include <gtest/gtest.h>

namespace tandem::ping {
namespace {

using namespace std::chrono_literals;

const IpAddress kGw = *IpAddress::parse("198.51.100.100");
const IpAddress kGw6 = *IpAddress::parse("2001:db8::100");
const IpAddress kStranger = *IpAddress::parse("198.51.100.7");
const Time t0 = Time(1h);

TEST(ReachTracker, PendingUntilTheFirstRoundIsDecided) {
  ReachTracker r({kGw}, 1000ms);
  EXPECT_EQ(r.state(), Reach::kPending);
  EXPECT_FALSE(r.nextDeadline());
  uint16_t seq = r.startRound(t0);
  EXPECT_EQ(r.nextDeadline(), t0 + 1000ms);
  EXPECT_FALSE(r.onTick(t0 + 999ms));
  auto c = r.onReply(t0 + 3ms, kGw, seq);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->from, Reach::kPending);
  EXPECT_EQ(c->to, Reach::kReached);
  EXPECT_EQ(c->detail, "198.51.100.100 answered");
  EXPECT_EQ(r.openRounds(), 0u);
  EXPECT_FALSE(r.onTick(t0 + 5s));  // nothing open: nothing to lose
}

TEST(ReachTracker, AnyTargetAnsweringIsEnough) {
  ReachTracker r({kGw, kGw6}, 500ms);
  uint16_t seq = r.startRound(t0);
  auto c = r.onReply(t0 + 1ms, kGw6, seq);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->to, Reach::kReached);
  EXPECT_FALSE(r.onReply(t0 + 2ms, kGw, seq));  // the round is settled already
}

TEST(ReachTracker, ARoundWithoutAnswerLosesNamingEveryTarget) {
  ReachTracker r({kGw, kGw6}, 1000ms);
  r.onReply(t0, kGw, r.startRound(t0));
  r.startRound(t0 + 1s);
  EXPECT_FALSE(r.onTick(t0 + 1999ms));
  auto c = r.onTick(t0 + 2s);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->from, Reach::kReached);
  EXPECT_EQ(c->to, Reach::kLost);
  EXPECT_EQ(c->detail, "none of 198.51.100.100, 2001:db8::100 answered within 1s");
  EXPECT_EQ(r.state(), Reach::kLost);
  // Another lost round changes nothing; an answer regains.
  r.startRound(t0 + 2s);
  EXPECT_FALSE(r.onTick(t0 + 3s));
  uint16_t seq = r.startRound(t0 + 3s);
  c = r.onReply(t0 + 3001ms, kGw, seq);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->from, Reach::kLost);
  EXPECT_EQ(c->to, Reach::kReached);
}

TEST(ReachTracker, LateStrayAndUnknownRepliesDoNotCount) {
  ReachTracker r({kGw}, 300ms);
  uint16_t seq = r.startRound(t0);
  EXPECT_FALSE(r.onReply(t0 + 1ms, kStranger, seq));                       // not a target
  EXPECT_FALSE(r.onReply(t0 + 1ms, kGw, static_cast<uint16_t>(seq + 1)));  // no such round
  EXPECT_FALSE(r.onReply(t0 + 300ms, kGw, seq));                           // at the timeout: late
  auto c = r.onTick(t0 + 300ms);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->to, Reach::kLost);
  EXPECT_FALSE(r.onReply(t0 + 301ms, kGw, seq));  // the round is closed
  EXPECT_EQ(r.state(), Reach::kLost);
}

TEST(ReachTracker, OverlappingRoundsTheNewestEvidenceWins) {
  // interval 100 ms, timeout 1 s: ten rounds open at once.
  ReachTracker r({kGw}, 1000ms);
  uint16_t first = r.startRound(t0);
  uint16_t second = r.startRound(t0 + 100ms);
  // The second round is answered, the first one's reply was lost: the first one's timeout
  // must not override the newer answer.
  ASSERT_TRUE(r.onReply(t0 + 101ms, kGw, second));
  EXPECT_EQ(r.openRounds(), 0u);
  EXPECT_FALSE(r.onTick(t0 + 1s));
  EXPECT_EQ(r.state(), Reach::kReached);
  // A reply to the older round arriving late is ignored too.
  EXPECT_FALSE(r.onReply(t0 + 102ms, kGw, first));
  // Now the target goes silent: the first unanswered round to time out decides.
  for (int i = 2; i < 12; ++i) r.startRound(t0 + i * 100ms);
  EXPECT_FALSE(r.onTick(t0 + 1199ms));
  auto c = r.onTick(t0 + 1200ms);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->to, Reach::kLost);
  // An answer to a newer round that is still open brings it back at once.
  ASSERT_TRUE(r.onReply(t0 + 1250ms, kGw, static_cast<uint16_t>(11)));
  EXPECT_EQ(r.state(), Reach::kReached);
  EXPECT_EQ(r.openRounds(), 0u);
}

TEST(ReachTracker, AfterALossRegainsOnlyOnceTheTargetsKeptAnsweringForRegainAfter) {
  ReachTracker r({kGw}, 300ms, 1000ms);
  ASSERT_TRUE(r.onReply(t0 + 1ms, kGw, r.startRound(t0)));  // the first verdict: at once
  r.startRound(t0 + 200ms);
  ASSERT_TRUE(r.onTick(t0 + 500ms));  // lost
  Time t = t0 + 600ms;
  // Answers again from 600 ms on, every 200 ms.
  for (; t < t0 + 1600ms; t += 200ms) {
    EXPECT_FALSE(r.onReply(t + 1ms, kGw, r.startRound(t))) << (t - t0).count();
  }
  auto c = r.onReply(t + 1ms, kGw, r.startRound(t));  // 1601 ms: answering for 1 s
  ASSERT_TRUE(c);
  EXPECT_EQ(c->to, Reach::kReached);
  EXPECT_EQ(c->detail, "198.51.100.100 answered for 1s");
  // A lost round during the wait starts it over.
  r.startRound(t0 + 2s);
  ASSERT_TRUE(r.onTick(t0 + 2300ms));
  EXPECT_FALSE(r.onReply(t0 + 2401ms, kGw, r.startRound(t0 + 2400ms)));
  r.startRound(t0 + 2600ms);
  EXPECT_FALSE(r.onTick(t0 + 2900ms));  // lost again: still lost, the wait restarts
  EXPECT_FALSE(r.onReply(t0 + 3401ms, kGw, r.startRound(t0 + 3400ms)));  // 0 ms into it
  EXPECT_TRUE(r.onReply(t0 + 4401ms, kGw, r.startRound(t0 + 4400ms)));
}

TEST(ReachTracker, SequenceNumbersWrapAround) {
  ReachTracker r({kGw}, 100ms);
  uint16_t seq = 0;
  for (int i = 0; i < 70000; ++i) {
    Time t = t0 + i * 200ms;
    seq = r.startRound(t);
    r.onReply(t + 1ms, kGw, seq);
  }
  EXPECT_EQ(seq, static_cast<uint16_t>(69999));
  EXPECT_EQ(r.state(), Reach::kReached);
  EXPECT_EQ(r.openRounds(), 0u);
}

}  // namespace
}  // namespace tandem::ping
