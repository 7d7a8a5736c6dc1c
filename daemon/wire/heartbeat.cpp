#include "wire/heartbeat.h"

#include <algorithm>

#include "wire/frame.h"

namespace tandem::wire {

namespace {

constexpr uint8_t kFlagStandby = 1u << 0;
constexpr uint8_t kFlagQuorate = 1u << 1;
constexpr uint8_t kFlagTiebreakerOk = 1u << 2;
constexpr uint8_t kFlagResourcesHeld = 1u << 3;
constexpr uint8_t kFlagMaintenance = 1u << 4;

bool isKnownRole(uint8_t r) { return r <= static_cast<uint8_t>(Role::kFault); }

}  // namespace

std::string_view roleName(Role r) {
  switch (r) {
    case Role::kInit:
      return "INIT";
    case Role::kBackup:
      return "BACKUP";
    case Role::kActive:
      return "ACTIVE";
    case Role::kStandby:
      return "STANDBY";
    case Role::kFault:
      return "FAULT";
  }
  return "UNKNOWN";
}

Result<Bytes> encodeHeartbeat(const Heartbeat& hb) {
  if (!isKnownRole(static_cast<uint8_t>(hb.role))) {
    return fail(ErrorCode::kInvalidArgument, "unknown role");
  }
  if (hb.health > kMaxHealth) {
    return fail(ErrorCode::kInvalidArgument,
                "health " + std::to_string(hb.health) + " is over " + std::to_string(kMaxHealth));
  }
  if (hb.active_view.size() > kMaxNodeNameBytes) {
    return fail(ErrorCode::kInvalidArgument, "the active view is longer than a node name");
  }
  if (hb.interval_ms == 0) return fail(ErrorCode::kInvalidArgument, "the interval is 0");
  if (hb.move_target.size() > kMaxNodeNameBytes) {
    return fail(ErrorCode::kInvalidArgument, "the move target is longer than a node name");
  }
  uint8_t flags = 0;
  if (hb.standby) flags |= kFlagStandby;
  if (hb.quorate) flags |= kFlagQuorate;
  if (hb.tiebreaker_ok) flags |= kFlagTiebreakerOk;
  if (hb.resources_held) flags |= kFlagResourcesHeld;
  if (hb.maintenance) flags |= kFlagMaintenance;
  ByteWriter w;
  w.u8(static_cast<uint8_t>(hb.role));
  w.u8(hb.priority);
  w.u16(hb.health);
  w.u8(flags);
  w.u8(static_cast<uint8_t>(hb.active_view.size()));
  w.bytes(asBytes(hb.active_view));
  w.u64(hb.epoch);
  w.u32(hb.interval_ms);
  w.u64(hb.move_generation);
  w.u8(static_cast<uint8_t>(hb.move_target.size()));
  w.bytes(asBytes(hb.move_target));
  w.u64(hb.connections);
  w.u32(hb.sync_backup_ms);
  w.u64(hb.templates);
  w.u32(hb.sync_heard_ms ? std::min(*hb.sync_heard_ms, kSyncNeverHeard - 1) : kSyncNeverHeard);
  w.u64(hb.maintenance_generation);
  w.u32(hb.move_lifetime_ms);
  return std::move(w).take();
}

Checked<Heartbeat> decodeHeartbeat(ByteView payload) {
  ByteReader r(payload);
  Heartbeat hb;
  uint8_t role = r.u8();
  hb.priority = r.u8();
  hb.health = r.u16();
  uint8_t flags = r.u8();
  uint8_t view_len = r.u8();
  if (!r.ok() || !isKnownRole(role) || hb.health > kMaxHealth || view_len > kMaxNodeNameBytes) {
    return Rejection::kBadPayload;
  }
  hb.role = static_cast<Role>(role);
  hb.standby = (flags & kFlagStandby) != 0;
  hb.quorate = (flags & kFlagQuorate) != 0;
  hb.tiebreaker_ok = (flags & kFlagTiebreakerOk) != 0;
  hb.resources_held = (flags & kFlagResourcesHeld) != 0;
  hb.maintenance = (flags & kFlagMaintenance) != 0;
  hb.active_view = std::string(asText(r.bytes(view_len)));
  hb.epoch = r.u64();
  hb.interval_ms = r.u32();
  if (!r.ok() || hb.interval_ms == 0) return Rejection::kBadPayload;
  if (r.remaining() > 0) {
    hb.move_generation = r.u64();
    uint8_t target_len = r.u8();
    if (!r.ok() || target_len > kMaxNodeNameBytes) return Rejection::kBadPayload;
    hb.move_target = std::string(asText(r.bytes(target_len)));
    if (!r.ok()) return Rejection::kBadPayload;
  }
  if (r.remaining() > 0) {
    hb.connections = r.u64();
    hb.sync_backup_ms = r.u32();
    if (!r.ok()) return Rejection::kBadPayload;
  }
  if (r.remaining() > 0) {
    hb.templates = r.u64();
    const uint32_t heard = r.u32();
    if (!r.ok()) return Rejection::kBadPayload;
    if (heard != kSyncNeverHeard) hb.sync_heard_ms = heard;
  }
  if (r.remaining() > 0) {
    hb.maintenance_generation = r.u64();
    hb.move_lifetime_ms = r.u32();
    if (!r.ok()) return Rejection::kBadPayload;
  }
  // Whatever follows is from a newer sender; it is not ours to judge.
  return hb;
}

}  // namespace tandem::wire
