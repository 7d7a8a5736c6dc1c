#include "wire/heartbeat.h"

#include <gtest/gtest.h>

#include "wire/frame.h"
#include "wire_test_util.h"

namespace tandem::wire {
namespace {

using testing::sampleHeartbeat;

TEST(Heartbeat, RoundTripsEveryRoleAndFlag) {
  for (Role role : {Role::kInit, Role::kBackup, Role::kActive, Role::kStandby, Role::kFault}) {
    for (int flags = 0; flags < 32; ++flags) {
      Heartbeat hb = sampleHeartbeat();
      hb.role = role;
      hb.standby = flags & 1;
      hb.quorate = flags & 2;
      hb.tiebreaker_ok = flags & 4;
      hb.resources_held = flags & 8;
      hb.maintenance = flags & 16;
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
  hb.move_generation = ~uint64_t{0};
  hb.move_target = std::string(64, 'm');
  hb.connections = ~uint64_t{0};
  hb.sync_backup_ms = ~uint32_t{0};
  hb.templates = ~uint64_t{0};
  hb.sync_heard_ms = kSyncNeverHeard - 1;
  EXPECT_EQ(decodeHeartbeat(*encodeHeartbeat(hb)).value(), hb);
  hb.sync_heard_ms = 0;  // heard in the same millisecond
  EXPECT_EQ(decodeHeartbeat(*encodeHeartbeat(hb)).value(), hb);
  hb.sync_heard_ms.reset();  // none heard
  EXPECT_EQ(decodeHeartbeat(*encodeHeartbeat(hb)).value(), hb);
  hb.active_view.clear();  // no active director in view
  hb.move_target.clear();  // no move in force
  Result<Bytes> b = encodeHeartbeat(hb);
  EXPECT_EQ(b->size(), kHeartbeatMinBytes + kHeartbeatTailBytes);
  EXPECT_EQ(decodeHeartbeat(*b).value(), hb);
}

Heartbeat withDrains() {
  Heartbeat hb = sampleHeartbeat();
  hb.drain_generation = 1764792000123;
  DrainReport tcp{*DrainTarget::parse("tcp 198.51.100.50:80 203.0.113.10:80"), {3u, 1u}};
  DrainReport v6{*DrainTarget::parse("udp [2001:db8::50]:53 [2001:db8::10]:53"), {}};
  DrainReport mark{*DrainTarget::parse("fwmark 7 (IPv6) [2001:db8::11]:0"), {0u, 0u}};
  hb.drains = {tcp, v6, mark};
  return hb;
}

TEST(Heartbeat, LongerPayloadFromANewerSenderIsAcceptedAndTheTailIgnored) {
  // A newer sender writes every field this one knows, the drains last, then its own.
  Bytes b = *encodeHeartbeat(withDrains());
  b.insert(b.end(), {0x01, 0x02, 0x03, 0xff});
  Checked<Heartbeat> hb = decodeHeartbeat(b);
  ASSERT_TRUE(hb);
  EXPECT_EQ(*hb, withDrains());
}

TEST(Heartbeat, DrainsRoundTripWithTheirProgressAndUnknownCounts) {
  Checked<Heartbeat> hb = decodeHeartbeat(*encodeHeartbeat(withDrains()));
  ASSERT_TRUE(hb);
  EXPECT_EQ(*hb, withDrains());
  EXPECT_EQ(hb->drains[1].progress.active, std::nullopt);
  EXPECT_TRUE(hb->drains[2].progress.done());
}

TEST(Heartbeat, NoDrainEverSetWritesNoDrainSection) {
  Heartbeat hb = sampleHeartbeat();
  const size_t without = encodeHeartbeat(hb)->size();
  hb.drain_generation = 9;  // drains set once, all enabled again since
  EXPECT_EQ(encodeHeartbeat(hb)->size(), without + 9);
  EXPECT_EQ(decodeHeartbeat(*encodeHeartbeat(hb)).value(), hb);
}

TEST(Heartbeat, SixteenIpv6DrainsFitThePayloadAndASeventeenthIsRefused) {
  Heartbeat hb = sampleHeartbeat();
  hb.active_view = std::string(64, 'a');
  hb.move_target = std::string(64, 'b');
  hb.drain_generation = 1;
  for (int i = 0; i < 16; ++i) {
    hb.drains.push_back(
        {*DrainTarget::parse("sctp [2001:db8::50]:80 [2001:db8::" + std::to_string(i + 1) + "]:80"),
         {4000000000u, 4000000000u}});
  }
  Result<Bytes> b = encodeHeartbeat(hb);
  ASSERT_TRUE(b);
  EXPECT_LE(b->size(), kMaxPayloadBytes);
  EXPECT_EQ(decodeHeartbeat(*b).value(), hb);
  hb.drains.push_back(hb.drains.front());
  EXPECT_FALSE(encodeHeartbeat(hb));
}

TEST(Heartbeat, AMalformedDrainSectionIsABadPayload) {
  const Bytes good = *encodeHeartbeat(withDrains());
  // Cut anywhere inside the section: the drains promised are not all there.
  const size_t without = encodeHeartbeat(sampleHeartbeat())->size();
  for (size_t cut = without + 1; cut < good.size(); ++cut) {
    Bytes b(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_EQ(decodeHeartbeat(b).error(), Rejection::kBadPayload) << "cut at " << cut;
  }
  Bytes zero_generation = good;
  for (size_t i = 0; i < 8; ++i) zero_generation[without + i] = 0;
  EXPECT_EQ(decodeHeartbeat(zero_generation).error(), Rejection::kBadPayload);
  Bytes too_many = good;
  too_many[without + 8] = 17;
  EXPECT_EQ(decodeHeartbeat(too_many).error(), Rejection::kBadPayload);
  Bytes bad_protocol = good;
  bad_protocol[without + 9] = 99;
  EXPECT_EQ(decodeHeartbeat(bad_protocol).error(), Rejection::kBadPayload);
}

TEST(Heartbeat, APayloadFromASenderWithoutMovesReadsAsNoMove) {
  Heartbeat hb = sampleHeartbeat();
  Bytes b = *encodeHeartbeat(hb);
  b.resize(kHeartbeatMinBytes + hb.active_view.size());  // what a sender before moves wrote
  Checked<Heartbeat> got = decodeHeartbeat(b);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->move_generation, 0u);
  EXPECT_EQ(got->move_target, "");
}

TEST(Heartbeat, APayloadFromASenderWithoutSyncReadsAsNoConnectionsAndNoBackup) {
  Heartbeat hb = sampleHeartbeat();
  hb.move_generation = 3;
  hb.move_target = "lb2";
  Bytes b = *encodeHeartbeat(hb);
  // a sender before connection sync
  b.resize(b.size() - 12 - kHeartbeatSyncDetailBytes - kHeartbeatOperatorBytes);
  Checked<Heartbeat> got = decodeHeartbeat(b);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->move_target, "lb2");
  EXPECT_EQ(got->connections, 0u);
  EXPECT_EQ(got->sync_backup_ms, 0u);
}

TEST(Heartbeat, AHeardAgeAsLongAsNeverHeardSaturatesInsteadOfReadingAsNone) {
  Heartbeat hb = sampleHeartbeat();
  hb.sync_heard_ms = kSyncNeverHeard;
  EXPECT_EQ(decodeHeartbeat(*encodeHeartbeat(hb))->sync_heard_ms, kSyncNeverHeard - 1);
}

TEST(Heartbeat, APayloadFromASenderWithoutTheSyncDetailReadsAsNoTemplatesAndNoneHeard) {
  Heartbeat hb = sampleHeartbeat();
  Bytes b = *encodeHeartbeat(hb);
  // what a sender before the detail wrote
  b.resize(b.size() - kHeartbeatSyncDetailBytes - kHeartbeatOperatorBytes);
  Checked<Heartbeat> got = decodeHeartbeat(b);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->connections, hb.connections);
  EXPECT_EQ(got->sync_backup_ms, hb.sync_backup_ms);
  EXPECT_EQ(got->templates, 0u);
  EXPECT_EQ(got->sync_heard_ms, std::nullopt);
}

TEST(Heartbeat, EveryShorterPayloadIsBadPayload) {
  Heartbeat sample = sampleHeartbeat();
  sample.move_generation = 3;
  sample.move_target = "lb2";
  Bytes b = *encodeHeartbeat(sample);
  const size_t without_move = kHeartbeatMinBytes + sample.active_view.size();
  const size_t without_operator = b.size() - kHeartbeatOperatorBytes;
  const size_t without_detail = without_operator - kHeartbeatSyncDetailBytes;
  const size_t without_sync = without_detail - 12;
  for (size_t len = 0; len < b.size(); ++len) {
    // Complete payloads of older senders.
    if (len == without_move || len == without_sync || len == without_detail ||
        len == without_operator) {
      continue;
    }
    Checked<Heartbeat> hb = decodeHeartbeat(ByteView(b).first(len));
    ASSERT_FALSE(hb) << "length " << len;
    EXPECT_EQ(hb.error(), Rejection::kBadPayload);
  }
}

TEST(Heartbeat, APayloadFromASenderWithoutOperatorFieldsReadsAsNoMaintenanceAndNoLifetime) {
  Heartbeat hb = sampleHeartbeat();
  hb.move_generation = 3;
  hb.move_target = "lb2";
  hb.move_lifetime_ms = 60000;
  hb.maintenance_generation = 9;
  Bytes b = *encodeHeartbeat(hb);
  b.resize(b.size() - kHeartbeatOperatorBytes);  // what a sender before them wrote
  Checked<Heartbeat> got = decodeHeartbeat(b);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->move_target, "lb2");
  EXPECT_EQ(got->templates, hb.templates);
  EXPECT_EQ(got->maintenance_generation, 0u);
  EXPECT_EQ(got->move_lifetime_ms, 0u);
}

TEST(Heartbeat, MaintenanceAndItsGenerationAndTheMoveLifetimeRoundTrip) {
  Heartbeat hb = sampleHeartbeat();
  hb.maintenance = true;
  hb.maintenance_generation = 1'764'792'000'123;
  hb.move_generation = 5;
  hb.move_target = "lb1";
  hb.move_lifetime_ms = ~uint32_t{0};
  Bytes b = *encodeHeartbeat(hb);
  EXPECT_EQ(b[4] & 0x10, 0x10);
  EXPECT_EQ(decodeHeartbeat(b).value(), hb);
}

TEST(Heartbeat, UnknownFlagBitsAreIgnored) {
  Bytes b = *encodeHeartbeat(sampleHeartbeat());
  b[4] |= 0xe0;
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
  const size_t interval_at = 14 + sampleHeartbeat().active_view.size();
  for (size_t i = interval_at; i < interval_at + 4; ++i) interval[i] = 0;
  Bytes move = good;
  move[interval_at + 4 + 8] = 65;  // a move target longer than a node name
  for (const Bytes& b : {role, health, view, interval, move}) {
    EXPECT_EQ(decodeHeartbeat(b).error(), Rejection::kBadPayload);
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
