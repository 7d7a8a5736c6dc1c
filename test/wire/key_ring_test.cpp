#include "wire/key_ring.h"

#include <gtest/gtest.h>

#include "wire/frame.h"
#include "wire_test_util.h"

namespace tandem::wire {
namespace {

using testing::heartbeatFrame;
using testing::key1;
using testing::key2;
using testing::seal;

NodeSet peers() { return {"lb1"}; }

TEST(KeyRing, FirstKeyAddedBecomesActive) {
  KeyRing ring;
  EXPECT_EQ(ring.activeId(), KeyRing::kNoKey);
  ASSERT_TRUE(ring.add(5, key1()));
  ASSERT_TRUE(ring.add(6, key2()));
  EXPECT_EQ(ring.activeId(), 5);
  EXPECT_EQ(ring.size(), 2u);
}

TEST(KeyRing, RefusesBadIdsAndSizes) {
  KeyRing ring;
  EXPECT_EQ(ring.add(0, key1()).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ring.add(1, Bytes(15, 1)).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ring.add(1, Bytes(4097, 1)).error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(ring.add(1, Bytes(16, 1)));
  EXPECT_TRUE(ring.add(2, Bytes(4096, 1)));
  EXPECT_EQ(ring.add(1, key1()).error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(ring.setActive(3).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(ring.remove(3).error().code, ErrorCode::kNotFound);
}

TEST(KeyRing, WillNotRemoveTheActiveKey) {
  KeyRing ring = testing::ringWith({1, 2}, 1);
  EXPECT_FALSE(ring.remove(1));
  EXPECT_TRUE(ring.remove(2));
  EXPECT_FALSE(ring.contains(2));
}

TEST(KeyRing, VerifyRejectsWrongLengthAndUnknownId) {
  KeyRing ring = testing::ringWith({1}, 1);
  Bytes data = testing::textBytes("data");
  Mac mac = *ring.sign(data);
  EXPECT_TRUE(ring.verify(1, data, mac));
  EXPECT_FALSE(ring.verify(1, data, ByteView(mac).first(31)));
  EXPECT_FALSE(ring.verify(2, data, mac));
}

TEST(KeyRing, MovedRingStillSigns) {
  KeyRing a = testing::ringWith({1}, 1);
  Mac before = *a.sign(key2());
  KeyRing b = std::move(a);
  EXPECT_EQ(*b.sign(key2()), before);
}

TEST(SecretKey, MovingTransfersTheBytesAndEmptiesTheSource) {
  Bytes k = key1();
  SecretKey a(k);
  SecretKey b(std::move(a));
  EXPECT_TRUE(a.bytes().empty());  // NOLINT(bugprone-use-after-move): checking the moved-from
  EXPECT_EQ(Bytes(b.bytes().begin(), b.bytes().end()), k);
  SecretKey c(key2());
  c = std::move(b);
  EXPECT_TRUE(b.bytes().empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(Bytes(c.bytes().begin(), c.bytes().end()), k);
}

// --- rotation ---

TEST(KeyRotation, FramesUnderEitherHeldKeyAreAccepted) {
  KeyRing old_sender = testing::ringWith({1}, 1);
  KeyRing new_sender = testing::ringWith({1, 2}, 2);
  KeyRing receiver = testing::ringWith({1, 2}, 1);
  Checked<Frame> a = verifyFrame(seal(heartbeatFrame(), old_sender), receiver, "web", peers());
  Checked<Frame> b = verifyFrame(seal(heartbeatFrame(), new_sender), receiver, "web", peers());
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(a->key_id, 1);
  EXPECT_EQ(b->key_id, 2);
}

TEST(KeyRotation, SendsUseTheActiveKeyAfterSwitching) {
  KeyRing ring = testing::ringWith({1, 2}, 1);
  EXPECT_EQ(decodeFrame(seal(heartbeatFrame(), ring))->key_id, 1);
  ASSERT_TRUE(ring.setActive(2));
  EXPECT_EQ(decodeFrame(seal(heartbeatFrame(), ring))->key_id, 2);
}

TEST(KeyRotation, AfterTheOldKeyIsRemovedItsFramesAreUnknownKey) {
  KeyRing old_sender = testing::ringWith({1}, 1);
  KeyRing receiver = testing::ringWith({1, 2}, 2);
  ASSERT_TRUE(receiver.remove(1));
  EXPECT_EQ(verifyFrame(seal(heartbeatFrame(), old_sender), receiver, "web", peers()).error(),
            Rejection::kUnknownKey);
}

TEST(KeyRotation, SameIdWithADifferentSecretIsBadSignature) {
  // Two nodes that disagree on what key 2 is: the MAC, not the id, decides.
  KeyRing sender;
  ASSERT_TRUE(sender.add(2, key1()));
  KeyRing receiver = testing::ringWith({1, 2}, 1);
  EXPECT_EQ(verifyFrame(seal(heartbeatFrame(), sender), receiver, "web", peers()).error(),
            Rejection::kBadSignature);
}

}  // namespace
}  // namespace tandem::wire
