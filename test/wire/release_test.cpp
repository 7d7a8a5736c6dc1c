#include "wire/release.h"

#include <gtest/gtest.h>

#include "wire_test_util.h"

namespace tandem::wire {
namespace {

TEST(Release, RoundTripsBothKinds) {
  for (const Release& rel : {Release{ReleaseKind::kRequest, "lb1", 3},
                             Release{ReleaseKind::kReleased, "lb2", ~uint64_t{0}},
                             Release{ReleaseKind::kReleased, "", 0},
                             Release{ReleaseKind::kRequest, std::string(64, 't'), 1}}) {
    Result<Bytes> b = encodeRelease(rel);
    ASSERT_TRUE(b);
    EXPECT_EQ(decodeRelease(*b).value(), rel);
  }
}

TEST(Release, PinnedBytes) {
  EXPECT_EQ(testing::toHex(*encodeRelease(Release{ReleaseKind::kRequest, "lb2", 5})),
            "01036c62320000000000000005");
}

TEST(Release, LongerPayloadIsAcceptedAndTheTailIgnored) {
  Release rel{ReleaseKind::kRequest, "lb2", 5};
  Bytes b = *encodeRelease(rel);
  b.push_back(0x77);
  EXPECT_EQ(decodeRelease(b).value(), rel);
}

TEST(Release, EveryShorterPayloadIsBadPayload) {
  Bytes b = *encodeRelease(Release{ReleaseKind::kReleased, "lb2", 5});
  for (size_t len = 0; len < b.size(); ++len) {
    EXPECT_EQ(decodeRelease(ByteView(b).first(len)).error(), Rejection::kBadPayload) << len;
  }
}

TEST(Release, UnknownKindOrLongTargetIsBadPayload) {
  Bytes b = *encodeRelease(Release{ReleaseKind::kReleased, "lb2", 5});
  for (uint8_t kind : {0, 3, 255}) {
    Bytes bad = b;
    bad[0] = kind;
    EXPECT_EQ(decodeRelease(bad).error(), Rejection::kBadPayload) << int(kind);
  }
  Bytes long_target = b;
  long_target[1] = 65;
  EXPECT_EQ(decodeRelease(long_target).error(), Rejection::kBadPayload);
}

TEST(Release, EncodeRefusesWhatDecodeWouldReject) {
  EXPECT_FALSE(encodeRelease(Release{static_cast<ReleaseKind>(0), "lb2", 1}));
  EXPECT_FALSE(encodeRelease(Release{ReleaseKind::kRequest, std::string(65, 't'), 1}));
}

TEST(Release, KindNamesAreStable) {
  EXPECT_EQ(releaseKindName(ReleaseKind::kRequest), "request");
  EXPECT_EQ(releaseKindName(ReleaseKind::kReleased), "released");
}

}  // namespace
}  // namespace tandem::wire
