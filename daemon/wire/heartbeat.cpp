#include "wire/heartbeat.h"

#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <optional>

#include "wire/frame.h"

namespace tandem::wire {

namespace {

constexpr uint8_t kFlagStandby = 1u << 0;
constexpr uint8_t kFlagQuorate = 1u << 1;
constexpr uint8_t kFlagTiebreakerOk = 1u << 2;
constexpr uint8_t kFlagResourcesHeld = 1u << 3;
constexpr uint8_t kFlagMaintenance = 1u << 4;

bool isKnownRole(uint8_t r) { return r <= static_cast<uint8_t>(Role::kFault); }

constexpr uint32_t kUnknownCount = 0xffffffff;

bool knownProtocol(uint8_t p) {
  return p == 0 || p == IPPROTO_TCP || p == IPPROTO_UDP || p == IPPROTO_SCTP;
}

bool validDrain(const DrainTarget& t) {
  if (!knownProtocol(t.protocol) || (t.protocol == 0) != (t.fwmark != 0)) return false;
  return t.fwmark != 0 || t.address.family == t.family;
}

void writeAddress(ByteWriter& w, const IpAddress& a) {
  w.u8(static_cast<uint8_t>(a.family));
  w.bytes(ByteView(a.bytes.data(), a.family == Family::kInet ? 4 : 16));
}

std::optional<IpAddress> readAddress(ByteReader& r) {
  const uint8_t family = r.u8();
  if (!r.ok() || (family != 4 && family != 6)) return std::nullopt;
  IpAddress a;
  a.family = static_cast<Family>(family);
  ByteView b = r.bytes(family == 4 ? 4 : 16);
  if (!r.ok()) return std::nullopt;
  std::copy(b.begin(), b.end(), a.bytes.begin());
  return a;
}

void writeCount(ByteWriter& w, const std::optional<uint32_t>& n) {
  w.u32(n ? std::min(*n, kUnknownCount - 1) : kUnknownCount);
}

std::optional<uint32_t> readCount(ByteReader& r) {
  const uint32_t n = r.u32();
  if (n == kUnknownCount) return std::nullopt;
  return n;
}

void writeDrain(ByteWriter& w, const DrainReport& d) {
  const DrainTarget& t = d.target;
  w.u8(t.protocol);
  if (t.protocol == 0) {
    w.u8(static_cast<uint8_t>(t.family));
    w.u32(t.fwmark);
  } else {
    writeAddress(w, t.address);
    w.u16(t.port);
  }
  writeAddress(w, t.server.address);
  w.u16(t.server.port);
  writeCount(w, d.progress.active);
  writeCount(w, d.progress.templates);
}

std::optional<DrainReport> readDrain(ByteReader& r) {
  DrainReport d;
  DrainTarget& t = d.target;
  t.protocol = r.u8();
  if (!r.ok() || !knownProtocol(t.protocol)) return std::nullopt;
  if (t.protocol == 0) {
    const uint8_t family = r.u8();
    t.fwmark = r.u32();
    if (!r.ok() || (family != 4 && family != 6) || t.fwmark == 0) return std::nullopt;
    t.family = static_cast<Family>(family);
  } else {
    auto a = readAddress(r);
    if (!a) return std::nullopt;
    t.address = *a;
    t.family = a->family;
    t.port = r.u16();
  }
  auto server = readAddress(r);
  if (!server) return std::nullopt;
  t.server.address = *server;
  t.server.port = r.u16();
  d.progress.active = readCount(r);
  d.progress.templates = readCount(r);
  if (!r.ok()) return std::nullopt;
  return d;
}

}  // namespace

std::string_view roleName(Role r) {
  static constexpr std::array<std::string_view, 5> kNames = {"INIT", "BACKUP", "ACTIVE", "STANDBY",
                                                             "FAULT"};
  const auto i = static_cast<size_t>(r);
  return i < kNames.size() ? kNames[i] : "UNKNOWN";
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
  if (hb.drains.size() > kMaxDrains || (hb.drain_generation == 0 && !hb.drains.empty())) {
    return fail(ErrorCode::kInvalidArgument,
                "drains: at most " + std::to_string(kMaxDrains) + ", and only with a generation");
  }
  for (const DrainReport& d : hb.drains) {
    if (!validDrain(d.target)) {
      return fail(ErrorCode::kInvalidArgument, "drain " + d.target.toString() + " is not valid");
    }
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
  if (hb.drain_generation != 0) {
    w.u64(hb.drain_generation);
    w.u8(static_cast<uint8_t>(hb.drains.size()));
    for (const DrainReport& d : hb.drains) writeDrain(w, d);
  }
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
  if (r.remaining() > 0) {
    hb.drain_generation = r.u64();
    const uint8_t count = r.u8();
    if (!r.ok() || hb.drain_generation == 0 || count > kMaxDrains) return Rejection::kBadPayload;
    for (uint8_t i = 0; i < count; ++i) {
      std::optional<DrainReport> d = readDrain(r);
      if (!d) return Rejection::kBadPayload;
      hb.drains.push_back(std::move(*d));
    }
  }
  // Whatever follows is from a newer sender; it is not ours to judge.
  return hb;
}

}  // namespace tandem::wire
