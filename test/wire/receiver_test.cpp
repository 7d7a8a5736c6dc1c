#include "wire/receiver.h"

#include <gtest/gtest.h>

#include "wire/sealer.h"
#include "wire_test_util.h"

namespace tandem::wire {
namespace {

using testing::heartbeatFrame;
using testing::ringWith;
using testing::sampleHeartbeat;
using testing::seal;

// This node is lb1; its peers lb2 and lb3.
class FrameReceiverTest : public ::testing::Test {
 protected:
  KeyRing ring_ = ringWith({1}, 1);
  FrameReceiver rx_{"web", NodeSet{"lb2", "lb3"}};
  FrameSealer lb2_{"web", "lb2", makeIncarnation(1700000000000, 7)};

  Bytes heartbeatFromLb2() { return *lb2_.sealHeartbeat(sampleHeartbeat(), ring_); }
};

TEST_F(FrameReceiverTest, AcceptsAHeartbeatAndDecodesItsBody) {
  Checked<Message> m = rx_.receive(heartbeatFromLb2(), ring_);
  ASSERT_TRUE(m) << name(m.error());
  EXPECT_EQ(m->frame.sender, "lb2");
  EXPECT_EQ(std::get<Heartbeat>(m->body), sampleHeartbeat());
  EXPECT_EQ(rx_.counters().accepted, 1u);
  EXPECT_EQ(rx_.counters().rejectedTotal(), 0u);
}

TEST_F(FrameReceiverTest, AcceptsAReleaseAndAnAdminFrame) {
  Release rel{ReleaseKind::kRequest, "lb1", 4};
  Checked<Message> r = rx_.receive(*lb2_.sealRelease(rel, ring_), ring_);
  ASSERT_TRUE(r);
  EXPECT_EQ(std::get<Release>(r->body), rel);
  Bytes opaque = {1, 2, 3};
  Checked<Message> a = rx_.receive(*lb2_.seal(FrameType::kAdmin, opaque, ring_), ring_);
  ASSERT_TRUE(a);
  EXPECT_TRUE(std::holds_alternative<Admin>(a->body));
  EXPECT_EQ(a->frame.payload, opaque);
}

TEST_F(FrameReceiverTest, CapturedFrameReplayedIsRejected) {
  Bytes captured = heartbeatFromLb2();
  ASSERT_TRUE(rx_.receive(captured, ring_));
  ASSERT_TRUE(rx_.receive(heartbeatFromLb2(), ring_));
  Checked<Message> again = rx_.receive(captured, ring_);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), Rejection::kReplayed);
  EXPECT_EQ(rx_.counters().of(Rejection::kReplayed), 1u);
}

TEST_F(FrameReceiverTest, FramesFromAnEarlierRunAreStaleAfterTheRestart) {
  Bytes old_run = heartbeatFromLb2();
  FrameSealer restarted{"web", "lb2", makeIncarnation(1700000060000, 3)};
  ASSERT_TRUE(rx_.receive(*restarted.sealHeartbeat(sampleHeartbeat(), ring_), ring_));
  EXPECT_EQ(rx_.receive(old_run, ring_).error(), Rejection::kStaleIncarnation);
}

TEST_F(FrameReceiverTest, BothPathsSealedSeparatelyAreBothAcceptedInOrder) {
  Bytes cpg = heartbeatFromLb2();
  Bytes udp = heartbeatFromLb2();
  EXPECT_TRUE(rx_.receive(cpg, ring_));
  EXPECT_TRUE(rx_.receive(udp, ring_));
  EXPECT_EQ(rx_.receive(cpg, ring_).error(), Rejection::kReplayed);
}

TEST_F(FrameReceiverTest, AFrameOlderThanOneAlreadyTakenIsSupersededNotApplied) {
  Bytes late_cpg = heartbeatFromLb2();  // sealed first, delivered last
  Bytes udp = heartbeatFromLb2();
  EXPECT_TRUE(rx_.receive(udp, ring_));
  EXPECT_EQ(rx_.receive(late_cpg, ring_).error(), Rejection::kSuperseded);
  EXPECT_EQ(rx_.counters().of(Rejection::kSuperseded), 1u);
  EXPECT_EQ(rx_.receive(late_cpg, ring_).error(), Rejection::kReplayed) << "and only once";
  EXPECT_TRUE(rx_.receive(heartbeatFromLb2(), ring_)) << "what follows is taken";
}

TEST_F(FrameReceiverTest, AFrameNamingAnotherNodeThanItsPathIsSenderMismatch) {
  // lb2's key-holding neighbour speaks for lb2 from lb3's path: refused before the guard, so
  // that it cannot move lb2's window either.
  FrameSealer big{"web", "lb2", makeIncarnation(1700000000000, 7), uint64_t{1} << 40};
  EXPECT_EQ(rx_.receive(*big.sealHeartbeat(sampleHeartbeat(), ring_), ring_, "lb3").error(),
            Rejection::kSenderMismatch);
  EXPECT_EQ(rx_.receive(heartbeatFromLb2(), ring_, "").error(), Rejection::kSenderMismatch)
      << "an address that is no peer's";
  EXPECT_EQ(rx_.guard().window("lb2"), nullptr);
  EXPECT_TRUE(rx_.receive(heartbeatFromLb2(), ring_, "lb2"));
  EXPECT_TRUE(rx_.receive(heartbeatFromLb2(), ring_)) << "a path that cannot tell binds nothing";
}

TEST_F(FrameReceiverTest, ForgedFrameDoesNotMoveTheWindow) {
  // A forger who could advance lb2's window to sequence 2^63 would lock lb2 out.
  KeyRing forger;
  ASSERT_TRUE(forger.add(1, testing::textBytes("guessed secret, wrong of course")));
  FrameSealer fake{"web", "lb2", ~uint64_t{0}, uint64_t{1} << 63};
  EXPECT_EQ(rx_.receive(*fake.sealHeartbeat(sampleHeartbeat(), forger), ring_).error(),
            Rejection::kBadSignature);
  EXPECT_EQ(rx_.guard().window("lb2"), nullptr);
  EXPECT_TRUE(rx_.receive(heartbeatFromLb2(), ring_));
}

TEST_F(FrameReceiverTest, AuthenticFrameWithABadPayloadIsBadPayloadAndNotRecorded) {
  Bytes junk = {0x09};  // role 9, and too short anyway
  EXPECT_EQ(rx_.receive(*lb2_.seal(FrameType::kHeartbeat, junk, ring_), ring_).error(),
            Rejection::kBadPayload);
  EXPECT_EQ(rx_.guard().window("lb2"), nullptr);
}

TEST_F(FrameReceiverTest, CountsEachRejectionUnderItsReason) {
  Bytes good = heartbeatFromLb2();
  Bytes bad_mac = good;
  bad_mac.back() ^= 1;
  FrameSealer stranger{"web", "lb9", 1};
  FrameSealer other_cluster{"db", "lb2", 1};
  EXPECT_FALSE(rx_.receive(ByteView(good).first(10), ring_));
  EXPECT_FALSE(rx_.receive(bad_mac, ring_));
  EXPECT_FALSE(rx_.receive(*stranger.sealHeartbeat(sampleHeartbeat(), ring_), ring_));
  EXPECT_FALSE(rx_.receive(*other_cluster.sealHeartbeat(sampleHeartbeat(), ring_), ring_));
  EXPECT_TRUE(rx_.receive(good, ring_));
  EXPECT_FALSE(rx_.receive(good, ring_));
  const FrameCounters& c = rx_.counters();
  EXPECT_EQ(c.accepted, 1u);
  EXPECT_EQ(c.of(Rejection::kTruncated), 1u);
  EXPECT_EQ(c.of(Rejection::kBadSignature), 1u);
  EXPECT_EQ(c.of(Rejection::kUnknownNode), 1u);
  EXPECT_EQ(c.of(Rejection::kWrongCluster), 1u);
  EXPECT_EQ(c.of(Rejection::kReplayed), 1u);
  EXPECT_EQ(c.rejectedTotal(), 5u);
}

TEST_F(FrameReceiverTest, ReloadKeepsWindowsOfPeersThatStay) {
  Bytes captured = heartbeatFromLb2();
  ASSERT_TRUE(rx_.receive(captured, ring_));
  FrameSealer lb3{"web", "lb3", 1};
  ASSERT_TRUE(rx_.receive(*lb3.sealHeartbeat(sampleHeartbeat(), ring_), ring_));
  rx_.setPeers(NodeSet{"lb2", "lb4"});
  EXPECT_EQ(rx_.receive(captured, ring_).error(), Rejection::kReplayed);
  EXPECT_EQ(rx_.guard().window("lb3"), nullptr);
  EXPECT_EQ(rx_.receive(*lb3.sealHeartbeat(sampleHeartbeat(), ring_), ring_).error(),
            Rejection::kUnknownNode);
}

TEST(FrameSealer, NumbersFramesConsecutivelyAndSkipsNoneOnFailure) {
  KeyRing ring = ringWith({1}, 1);
  FrameSealer s{"web", "lb1", 77, 5};
  EXPECT_EQ(decodeFrame(*s.sealHeartbeat(sampleHeartbeat(), ring))->sequence, 5u);
  Heartbeat bad = sampleHeartbeat();
  bad.interval_ms = 0;
  EXPECT_FALSE(s.sealHeartbeat(bad, ring));
  EXPECT_FALSE(s.seal(FrameType::kAdmin, Bytes(kMaxPayloadBytes + 1, 0), ring));
  Checked<Frame> f = decodeFrame(*s.sealHeartbeat(sampleHeartbeat(), ring));
  EXPECT_EQ(f->sequence, 6u);
  EXPECT_EQ(f->incarnation, 77u);
  EXPECT_EQ(s.nextSequence(), 7u);
}

TEST(FrameSealer, RefusesToWrapTheSequence) {
  KeyRing ring = ringWith({1}, 1);
  FrameSealer s{"web", "lb1", 1, ~uint64_t{0}};
  EXPECT_EQ(s.sealHeartbeat(sampleHeartbeat(), ring).error().code, ErrorCode::kUnavailable);
}

TEST(Rejection, NamesAreStableCounterLabels) {
  const char* expected[] = {
      "truncated",     "bad_magic",     "unknown_version", "unknown_type", "unknown_key",
      "bad_signature", "wrong_cluster", "unknown_node",    "replayed",     "stale_incarnation",
      "oversized",     "bad_payload",   "sender_mismatch", "superseded"};
  ASSERT_EQ(std::size(expected), kRejectionCount);
  for (size_t i = 0; i < kRejectionCount; ++i) {
    EXPECT_EQ(static_cast<size_t>(kAllRejections[i]), i);
    EXPECT_EQ(name(kAllRejections[i]), expected[i]);
  }
}

}  // namespace
}  // namespace tandem::wire
