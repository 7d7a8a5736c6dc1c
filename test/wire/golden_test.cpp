// Golden bytes: the exact encoding of fixed frames, field by field. A change to a field here is
// a wire format change and must come with a version bump; a field appended to the heartbeat
// payload needs none (an older receiver ignores it, wire/heartbeat.h), only new bytes here.
//
// The MACs below were computed independently of this code while writing the test, with
//   printf '<signed hex>' | xxd -r -p > f.bin
//   openssl dgst -sha256 -mac HMAC -macopt hexkey:<key hex> f.bin
// (OpenSSL 3.0 command-line tool), over the signed bytes exactly as listed here.
#include <gtest/gtest.h>

#include "wire/frame.h"
#include "wire/heartbeat.h"
#include "wire/release.h"
#include "wire_test_util.h"

namespace tandem::wire {
namespace {

using testing::fromHex;
using testing::toHex;

constexpr const char* kHeartbeatPayloadHex =
    "02"                // role ACTIVE
    "96"                // priority 150
    "03e8"              // health 1000
    "0e"                // flags: quorate | tiebreaker_ok | resources_held
    "03 6c6231"         // active_view "lb1"
    "0000000000000007"  // epoch 7
    "000000c8"          // interval 200 ms
    "0000000000000000"  // move generation 0
    "00"                // no move target
    "00000000000004d2"  // connections 1234
    "00001388"          // sync backup daemon running for 5000 ms
    "0000000000000011"  // templates 17
    "00000320"          // the backup last heard a sync message 800 ms ago
    "0000000000000000"  // maintenance generation 0 (never set; flag bit4 is clear)
    "00000000";         // no move lifetime

constexpr const char* kHeartbeatFrameHex =
    "544e444d"          // magic "TNDM"
    "01"                // version 1
    "01"                // type heartbeat
    "0000"              // flags
    "0001"              // key id 1
    "03 776562"         // cluster "web"
    "03 6c6231"         // sender "lb1"
    "018bcfe56800beef"  // incarnation: 1700000000000 ms << 16 | 0xbeef
    "000000000000002a"  // sequence 42
    "0042"              // payload length 66
    "0296 03e8 0e 036c6231 0000000000000007 000000c8 0000000000000000 00"
    "00000000000004d2 00001388 0000000000000011 00000320 0000000000000000 00000000"
    // HMAC-SHA256, key 000102..1f, checked with openssl dgst as above
    "827039efbc0142d20cbb0666ad4d42cd2bb395c6540fb76b384bad65f8a26ac0";

// The same heartbeat from a tandemd before the operator fields (maintenance, move lifetime):
// what a newer node must still accept during a rolling upgrade.
constexpr const char* kHeartbeatFrameBeforeOperatorFieldsHex =
    "544e444d 01 01 0000 0001 03776562 036c6231 018bcfe56800beef 000000000000002a"
    "0036"  // payload length 54
    "0296 03e8 0e 036c6231 0000000000000007 000000c8 0000000000000000 00"
    "00000000000004d2 00001388 0000000000000011 00000320"
    "c5e10d688d770fe243d82910a16f13b6b34e1edca5b8128f5891c9c3698d74a9";

constexpr const char* kReleaseFrameHex =
    "544e444d"          // magic
    "01"                // version 1
    "02"                // type release
    "0000"              // flags
    "0002"              // key id 2
    "03 776562"         // cluster "web"
    "03 6c6231"         // sender "lb1"
    "018bcfe56800beef"  // incarnation
    "000000000000002b"  // sequence 43
    "000d"              // payload length 13
    "02"                // kind released
    "03 6c6232"         // target "lb2"
    "0000000000000008"  // epoch 8
    // HMAC-SHA256, key "tandem-golden-key-number-two!!", checked with openssl dgst as above
    "be4925f5dae114eef83d1f4bd524c64b7d77ff769dcd12f97a7125e77be61c7f";

TEST(WireGolden, HeartbeatPayloadEncodesToPinnedBytes) {
  Result<Bytes> b = encodeHeartbeat(testing::sampleHeartbeat());
  ASSERT_TRUE(b);
  EXPECT_EQ(toHex(*b), toHex(fromHex(kHeartbeatPayloadHex)));
}

TEST(WireGolden, HeartbeatFrameEncodesToPinnedBytes) {
  KeyRing ring = testing::ringWith({1}, 1);
  Result<Bytes> b = encodeFrame(testing::heartbeatFrame(), ring);
  ASSERT_TRUE(b);
  EXPECT_EQ(toHex(*b), toHex(fromHex(kHeartbeatFrameHex)));
}

TEST(WireGolden, ReleaseFrameSignedWithKeyTwoEncodesToPinnedBytes) {
  KeyRing ring = testing::ringWith({1, 2}, 2);
  Frame f;
  f.type = FrameType::kRelease;
  f.cluster = "web";
  f.sender = "lb1";
  f.incarnation = testing::kIncarnation;
  f.sequence = 43;
  f.payload = *encodeRelease(Release{ReleaseKind::kReleased, "lb2", 8});
  Result<Bytes> b = encodeFrame(f, ring);
  ASSERT_TRUE(b);
  EXPECT_EQ(toHex(*b), toHex(fromHex(kReleaseFrameHex)));
}

TEST(WireGolden, PinnedBytesDecodeAndVerify) {
  KeyRing ring = testing::ringWith({1, 2}, 1);
  NodeSet peers = {"lb1"};
  Bytes hb_bytes = fromHex(kHeartbeatFrameHex);
  Checked<Frame> hb = verifyFrame(hb_bytes, ring, "web", peers);
  ASSERT_TRUE(hb) << name(hb.error());
  EXPECT_EQ(hb->key_id, 1);
  EXPECT_EQ(hb->sequence, 42u);
  EXPECT_EQ(decodeHeartbeat(hb->payload).value(), testing::sampleHeartbeat());

  Bytes older = fromHex(kHeartbeatFrameBeforeOperatorFieldsHex);
  Checked<Frame> old_hb = verifyFrame(older, ring, "web", peers);
  ASSERT_TRUE(old_hb) << name(old_hb.error());
  EXPECT_EQ(decodeHeartbeat(old_hb->payload).value(), testing::sampleHeartbeat());

  Bytes rel_bytes = fromHex(kReleaseFrameHex);
  Checked<Frame> rel = verifyFrame(rel_bytes, ring, "web", peers);
  ASSERT_TRUE(rel) << name(rel.error());
  EXPECT_EQ(rel->key_id, 2);
  EXPECT_EQ(decodeRelease(rel->payload).value(), (Release{ReleaseKind::kReleased, "lb2", 8}));
}

TEST(WireGolden, RfcTestVectorMatchesTheHmac) {
  // RFC 4231 test case 1: ties KeyRing's OpenSSL calls to the published HMAC-SHA256.
  KeyRing ring;
  ASSERT_TRUE(ring.add(7, Bytes(20, 0x0b)));
  Result<Mac> mac = ring.mac(7, testing::textBytes("Hi There"));
  ASSERT_TRUE(mac);
  EXPECT_EQ(toHex(*mac), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

}  // namespace
}  // namespace tandem::wire
