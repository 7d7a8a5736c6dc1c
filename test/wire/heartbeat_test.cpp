#include "wire/heartbeat.h"

#include <gtest/gtest.h>

#include "wire_test_util.h"

namespace tandem::wire {
namespace {

using testing::sampleHeartbeat;

TEST(Heartbeat, RoundTripsEveryRoleAndFlag) {
  for (Role role : {Role::kInit, Role::kBackup, Role::kActive, Role::kStandby, Role::kFault}) {
    for (int flags = 0; flags < 16; ++flags) {
      Heartbeat hb = sampleHeartbeat();
      hb.role = role;
      hb.standby = flags & 1;
      hb.quorate = flags & 2;
      hb.tiebreaker_ok = flags & 4;
      hb.resources_held = flags & 8;
      Result<Bytes> b = encodeHeartbeat(hb);
      ASSERT_TRUE(b);
      Checked<Heartbeat> back = decodeHeartbeat(*b);
      ASSERT_TRUE(back);
      EXPECT_EQ(*back, hb);
    }
  }
}

TEST(Heartbeat, RoundTripsLimits) {
  Heartbeat hb = sampleHeartbeat();
  hb.priority = 255;
  hb.health = 0;
  hb.active_view = std::string(64, 'v');
  hb.epoch = ~uint64_t{0};
  hb.interval_ms = ~uint32_t{0};
  EXPECT_EQ(decodeHeartbeat(*encodeHeartbeat(hb)).value(), hb);
  hb.active_view.clear();  // no active director in view
  Result<Bytes> b = encodeHeartbeat(hb);
  EXPECT_EQ(b->size(), kHeartbeatMinBytes);
  EXPECT_EQ(decodeHeartbeat(*b).value(), hb);
}

TEST(Heartbeat, LongerPayloadFromANewerSenderIsAcceptedAndTheTailIgnored) {
  Bytes b = *encodeHeartbeat(sampleHeartbeat());
  b.insert(b.end(), {0x01, 0x02, 0x03, 0xff});
  Checked<Heartbeat> hb = decodeHeartbeat(b);
  ASSERT_TRUE(hb);
  EXPECT_EQ(*hb, sampleHeartbeat());
}

TEST(Heartbeat, EveryShorterPayloadIsBadPayload) {
  Bytes b = *encodeHeartbeat(sampleHeartbeat());
  for (size_t len = 0; len < b.size(); ++len) {
    Checked<Heartbeat> hb = decodeHeartbeat(ByteView(b).first(len));
    ASSERT_FALSE(hb) << "length " << len;
    EXPECT_EQ(hb.rejection(), Rejection::kBadPayload);
  }
}

TEST(Heartbeat, UnknownFlagBitsAreIgnored) {
  Bytes b = *encodeHeartbeat(sampleHeartbeat());
  b[4] |= 0xf0;
  EXPECT_EQ(decodeHeartbeat(b).value(), sampleHeartbeat());
}

TEST(Heartbeat, OutOfRangeFieldsAreBadPayload) {
  const Bytes good = *encodeHeartbeat(sampleHeartbeat());
  Bytes role = good;
  role[0] = 5;
  Bytes health = good;
  health[2] = 0x03;
  health[3] = 0xe9;  // 1001
  Bytes view = good;
  view[5] = 65;
  Bytes interval = good;
  for (size_t i = good.size() - 4; i < good.size(); ++i) interval[i] = 0;
  for (const Bytes& b : {role, health, view, interval}) {
    EXPECT_EQ(decodeHeartbeat(b).rejection(), Rejection::kBadPayload);
  }
}

TEST(Heartbeat, EncodeRefusesWhatDecodeWouldReject) {
  Heartbeat hb = sampleHeartbeat();
  hb.health = 1001;
  EXPECT_FALSE(encodeHeartbeat(hb));
  hb = sampleHeartbeat();
  hb.active_view = std::string(65, 'v');
  EXPECT_FALSE(encodeHeartbeat(hb));
  hb = sampleHeartbeat();
  hb.interval_ms = 0;
  EXPECT_FALSE(encodeHeartbeat(hb));
  hb = sampleHeartbeat();
  hb.role = static_cast<Role>(5);
  EXPECT_FALSE(encodeHeartbeat(hb));
}

TEST(Heartbeat, RoleNamesAreStable) {
  EXPECT_EQ(roleName(Role::kInit), "INIT");
  EXPECT_EQ(roleName(Role::kBackup), "BACKUP");
  EXPECT_EQ(roleName(Role::kActive), "ACTIVE");
  EXPECT_EQ(roleName(Role::kStandby), "STANDBY");
  EXPECT_EQ(roleName(Role::kFault), "FAULT");
}

}  // namespace
}  // namespace tandem::wire
