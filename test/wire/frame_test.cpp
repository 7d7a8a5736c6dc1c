#include "wire/frame.h"

#include <gtest/gtest.h>

#include "wire/release.h"
#include "wire_test_util.h"

namespace tandem::wire {
namespace {

using testing::heartbeatFrame;
using testing::ringWith;
using testing::seal;

NodeSet peers() { return {"lb1", "lb2"}; }

Checked<Frame> verify(ByteView b, const KeyRing& ring) {
  return verifyFrame(b, ring, "web", peers());
}

// --- round trips ---

TEST(Frame, HeartbeatRoundTrips) {
  KeyRing ring = ringWith({1}, 1);
  Frame f = heartbeatFrame();
  Checked<Frame> back = verify(seal(f, ring), ring);
  ASSERT_TRUE(back) << name(back.error());
  f.key_id = 1;
  EXPECT_EQ(*back, f);
}

TEST(Frame, ReleaseRoundTrips) {
  KeyRing ring = ringWith({1}, 1);
  Frame f = heartbeatFrame();
  f.type = FrameType::kRelease;
  f.payload = *encodeRelease(Release{ReleaseKind::kRequest, "lb2", 99});
  Checked<Frame> back = verify(seal(f, ring), ring);
  ASSERT_TRUE(back) << name(back.error());
  f.key_id = 1;
  EXPECT_EQ(*back, f);
}

TEST(Frame, AdminRoundTripsWithOpaquePayload) {
  KeyRing ring = ringWith({1}, 1);
  Frame f = heartbeatFrame();
  f.type = FrameType::kAdmin;
  f.payload = {0xde, 0xad, 0xbe, 0xef};
  Checked<Frame> back = verify(seal(f, ring), ring);
  ASSERT_TRUE(back) << name(back.error());
  f.key_id = 1;
  EXPECT_EQ(*back, f);
}

TEST(Frame, LimitsRoundTrip) {
  KeyRing ring = ringWith({1}, 1);
  Frame f = heartbeatFrame(std::string(kMaxNodeNameBytes, 'n'), ~uint64_t{0}, ~uint64_t{0} - 1);
  f.cluster = std::string(kMaxClusterNameBytes, 'c');
  f.payload = Bytes(kMaxPayloadBytes, 0x5a);
  Bytes b = seal(f, ring);
  EXPECT_EQ(b.size(), kMaxFrameBytes);
  Checked<Frame> back = verifyFrame(b, ring, f.cluster, NodeSet{f.sender});
  ASSERT_TRUE(back) << name(back.error());
  f.key_id = 1;
  EXPECT_EQ(*back, f);
}

TEST(Frame, EmptyPayloadRoundTripsStructurally) {
  KeyRing ring = ringWith({1}, 1);
  Frame f = heartbeatFrame();
  f.payload.clear();
  Bytes b = seal(f, ring);
  EXPECT_EQ(b.size(), kMinFrameBytes + 3 + 2);  // cluster "web", sender "lb1" beyond 1 byte
  EXPECT_TRUE(verify(b, ring));
}

TEST(Frame, EncodingSignsWithTheActiveKeyWhateverKeyIdSays) {
  KeyRing ring = ringWith({1, 2}, 2);
  Frame f = heartbeatFrame();
  f.key_id = 1;
  Checked<Frame> back = verify(seal(f, ring), ring);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->key_id, 2);
}

TEST(Frame, FlagsAreAuthenticatedButIgnored) {
  KeyRing ring = ringWith({1}, 1);
  Frame f = heartbeatFrame();
  f.flags = 0x8001;
  Checked<Frame> back = verify(seal(f, ring), ring);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->flags, 0x8001);
}

TEST(Frame, EncodeRefusesWhatDecodeWouldReject) {
  KeyRing ring = ringWith({1}, 1);
  Frame f = heartbeatFrame();
  f.sender = "";
  EXPECT_FALSE(encodeFrame(f, ring));
  f.sender = std::string(kMaxNodeNameBytes + 1, 'n');
  EXPECT_FALSE(encodeFrame(f, ring));
  f = heartbeatFrame();
  f.cluster = "";
  EXPECT_FALSE(encodeFrame(f, ring));
  f.cluster = std::string(kMaxClusterNameBytes + 1, 'c');
  EXPECT_FALSE(encodeFrame(f, ring));
  f = heartbeatFrame();
  f.payload = Bytes(kMaxPayloadBytes + 1, 0);
  EXPECT_FALSE(encodeFrame(f, ring));
  f = heartbeatFrame();
  f.type = static_cast<FrameType>(9);
  EXPECT_FALSE(encodeFrame(f, ring));
  EXPECT_FALSE(encodeFrame(heartbeatFrame(), KeyRing{}));
}

// --- structural rejections ---

TEST(Frame, EveryTruncationIsRejectedAsTruncated) {
  KeyRing ring = ringWith({1}, 1);
  Bytes b = seal(heartbeatFrame(), ring);
  for (size_t len = 0; len < b.size(); ++len) {
    Checked<Frame> f = decodeFrame(ByteView(b).first(len));
    ASSERT_FALSE(f) << "length " << len;
    EXPECT_EQ(f.error(), Rejection::kTruncated) << "length " << len;
  }
}

TEST(Frame, WrongMagicIsBadMagic) {
  KeyRing ring = ringWith({1}, 1);
  Bytes b = seal(heartbeatFrame(), ring);
  b[3] = 'X';
  EXPECT_EQ(decodeFrame(b).error(), Rejection::kBadMagic);
  EXPECT_EQ(decodeFrame(testing::textBytes("GET / HTTP/1.1\r\n")).error(), Rejection::kBadMagic);
}

TEST(Frame, OtherVersionsAreUnknownVersionWhateverFollows) {
  for (uint8_t v : {0, 2, 255}) {
    Bytes b = {'T', 'N', 'D', 'M', v};  // nothing after the version is read
    EXPECT_EQ(decodeFrame(b).error(), Rejection::kUnknownVersion) << int(v);
  }
}

TEST(Frame, UnknownTypesAreUnknownType) {
  KeyRing ring = ringWith({1}, 1);
  for (uint8_t t : {0, 4, 255}) {
    Bytes b = seal(heartbeatFrame(), ring);
    b[5] = t;
    EXPECT_EQ(decodeFrame(b).error(), Rejection::kUnknownType) << int(t);
  }
}

TEST(Frame, InputLongerThanAnyFrameIsOversized) {
  Bytes b(kMaxFrameBytes + 1, 0);
  EXPECT_EQ(decodeFrame(b).error(), Rejection::kOversized);
}

TEST(Frame, BytesAfterTheMacAreOversized) {
  KeyRing ring = ringWith({1}, 1);
  Bytes b = seal(heartbeatFrame(), ring);
  b.push_back(0);
  EXPECT_EQ(decodeFrame(b).error(), Rejection::kOversized);
}

TEST(Frame, SenderNameOverItsLimitIsOversized) {
  KeyRing ring = ringWith({1}, 1);
  Bytes b = seal(heartbeatFrame(), ring);
  b[14] = kMaxNodeNameBytes + 1;  // after magic, version, type, flags, key id, "\x03web"
  EXPECT_EQ(decodeFrame(b).error(), Rejection::kOversized);
}

TEST(Frame, PayloadLengthOverItsLimitIsOversized) {
  KeyRing ring = ringWith({1}, 1);
  Bytes b = seal(heartbeatFrame(), ring);
  size_t len_at = 10 + 4 + 4 + 16;
  b[len_at] = static_cast<uint8_t>((kMaxPayloadBytes + 1) >> 8);
  b[len_at + 1] = static_cast<uint8_t>(kMaxPayloadBytes + 1);
  EXPECT_EQ(decodeFrame(b).error(), Rejection::kOversized);
}

// --- verification ---

TEST(Frame, ForgedWithAnotherSecretIsBadSignature) {
  KeyRing ours = ringWith({1}, 1);
  KeyRing forger;
  ASSERT_TRUE(forger.add(1, testing::textBytes("not the cluster's secret at all")));
  EXPECT_EQ(verify(seal(heartbeatFrame(), forger), ours).error(), Rejection::kBadSignature);
}

TEST(Frame, AnySingleFlippedBitIsRejected) {
  KeyRing ring = ringWith({1, 2}, 1);
  Bytes good = seal(heartbeatFrame(), ring);
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes b = good;
      b[i] ^= static_cast<uint8_t>(1u << bit);
      EXPECT_FALSE(verify(b, ring)) << "byte " << i << " bit " << bit;
    }
  }
}

TEST(Frame, FlippedBitsInSignedFieldsAreCaughtByTheMac) {
  // Fields that still parse after the flip (flags, incarnation, sequence, payload, the MAC)
  // are caught by the MAC, not by luck of the parser.
  KeyRing ring = ringWith({1}, 1);
  Bytes good = seal(heartbeatFrame(), ring);
  for (size_t i : {6u, 7u, 18u, 22u, 30u, 40u, 57u, 88u}) {
    Bytes b = good;
    b[i] ^= 0x10;
    EXPECT_EQ(verify(b, ring).error(), Rejection::kBadSignature) << "byte " << i;
  }
}

TEST(Frame, KeyIdNotInTheRingIsUnknownKey) {
  KeyRing sender = ringWith({1, 3}, 3);
  KeyRing receiver = ringWith({1}, 1);
  EXPECT_EQ(verify(seal(heartbeatFrame(), sender), receiver).error(), Rejection::kUnknownKey);
}

TEST(Frame, SameKeyOtherClusterIsWrongCluster) {
  KeyRing ring = ringWith({1}, 1);
  Frame f = heartbeatFrame();
  f.cluster = "db";
  EXPECT_EQ(verify(seal(f, ring), ring).error(), Rejection::kWrongCluster);
}

TEST(Frame, RenamingTheClusterInTransitBreaksTheMac) {
  // A frame from cluster "wex" with the same key, its name edited to "web" on the way.
  KeyRing ring = ringWith({1}, 1);
  Frame f = heartbeatFrame();
  f.cluster = "wex";
  Bytes b = seal(f, ring);
  b[13] = 'b';
  EXPECT_EQ(verify(b, ring).error(), Rejection::kBadSignature);
}

TEST(Frame, SenderNotAmongPeersIsUnknownNode) {
  KeyRing ring = ringWith({1}, 1);
  EXPECT_EQ(verify(seal(heartbeatFrame("lb9"), ring), ring).error(), Rejection::kUnknownNode);
}

TEST(Frame, OurOwnFrameReflectedBackIsUnknownNode) {
  KeyRing ring = ringWith({1}, 1);
  Bytes ours = seal(heartbeatFrame("lb1"), ring);  // we are lb1; our peers are lb2 only
  EXPECT_EQ(verifyFrame(ours, ring, "web", NodeSet{"lb2"}).error(), Rejection::kUnknownNode);
}

TEST(Frame, EmptySenderNameDecodesButIsUnknownNode) {
  KeyRing ring = ringWith({1}, 1);
  Frame f = heartbeatFrame();
  f.sender = "x";
  f.key_id = 1;
  Bytes b = *encodeUnsigned(f);
  b.erase(b.begin() + 15);  // the name byte
  b[14] = 0;                // its length
  Result<Mac> mac = ring.sign(b);
  ASSERT_TRUE(mac);
  b.insert(b.end(), mac->begin(), mac->end());
  ASSERT_TRUE(decodeFrame(b));
  EXPECT_EQ(verify(b, ring).error(), Rejection::kUnknownNode);
}

TEST(Frame, DecodeGivesBackExactlyTheSignedBytes) {
  KeyRing ring = ringWith({1}, 1);
  Bytes b = seal(heartbeatFrame(), ring);
  Checked<Frame> f = decodeFrame(b);
  ASSERT_TRUE(f);
  Result<Bytes> again = encodeUnsigned(*f);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, Bytes(b.begin(), b.end() - kMacBytes));
}

TEST(Frame, TypeNamesAreStable) {
  EXPECT_EQ(frameTypeName(FrameType::kHeartbeat), "heartbeat");
  EXPECT_EQ(frameTypeName(FrameType::kRelease), "release");
  EXPECT_EQ(frameTypeName(FrameType::kAdmin), "admin");
}

}  // namespace
}  // namespace tandem::wire
