#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "common/byte_io.h"
#include "wire/frame.h"
#include "wire/heartbeat.h"
#include "wire/key_ring.h"
#include "wire/rejection.h"

namespace tandem::wire {
// So that a failed expectation reads "bad_signature", not "1-byte object <05>".
inline void PrintTo(Rejection r, std::ostream* os) { *os << name(r); }
}  // namespace tandem::wire

// Fixtures shared by the wire tests: hex helpers, a two-key ring, a typical heartbeat.
namespace tandem::wire::testing {

inline std::string toHex(ByteView b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t v : b) {
    out += kDigits[v >> 4];
    out += kDigits[v & 0xf];
  }
  return out;
}

// Spaces are allowed so that golden hex can be split field by field.
inline Bytes fromHex(std::string_view hex) {
  auto nibble = [](char c) -> uint8_t {
    if (c >= '0' && c <= '9') return static_cast<uint8_t>(c - '0');
    return static_cast<uint8_t>(c - 'a' + 10);
  };
  Bytes out;
  int half = -1;
  for (char c : hex) {
    if (c == ' ') continue;
    if (half < 0) {
      half = nibble(c);
    } else {
      out.push_back(static_cast<uint8_t>(half << 4 | nibble(c)));
      half = -1;
    }
  }
  return out;
}

inline Bytes textBytes(std::string_view s) {
  ByteView b = asBytes(s);
  return Bytes(b.begin(), b.end());
}

// Key 1: bytes 00..1f. Key 2: the ASCII text below. Both are used by the golden tests, which
// verified their MACs with the openssl command-line tool.
inline Bytes key1() {
  return fromHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
}
inline Bytes key2() { return textBytes("tandem-golden-key-number-two!!"); }

inline KeyRing ringWith(std::initializer_list<uint16_t> ids, uint16_t active) {
  KeyRing ring;
  for (uint16_t id : ids) {
    Bytes secret = id == 2 ? key2() : key1();
    if (id != 1 && id != 2) secret.push_back(static_cast<uint8_t>(id));  // distinct per id
    if (!ring.add(id, secret)) std::abort();
  }
  if (!ring.setActive(active)) std::abort();
  return ring;
}

inline constexpr uint64_t kIncarnation = 0x018bcfe56800beefULL;  // 1700000000000 ms, 0xbeef

inline Heartbeat sampleHeartbeat() {
  Heartbeat hb;
  hb.role = Role::kActive;
  hb.priority = 150;
  hb.health = 1000;
  hb.quorate = true;
  hb.tiebreaker_ok = true;
  hb.resources_held = true;
  hb.active_view = "lb1";
  hb.epoch = 7;
  hb.interval_ms = 200;
  hb.connections = 1234;
  hb.sync_backup_ms = 5000;
  hb.templates = 17;
  hb.sync_heard_ms = 800;
  return hb;
}

inline Frame heartbeatFrame(std::string sender = "lb1", uint64_t incarnation = kIncarnation,
                            uint64_t sequence = 42) {
  Frame f;
  f.type = FrameType::kHeartbeat;
  f.cluster = "web";
  f.sender = std::move(sender);
  f.incarnation = incarnation;
  f.sequence = sequence;
  f.payload = *encodeHeartbeat(sampleHeartbeat());
  return f;
}

inline Bytes seal(const Frame& f, const KeyRing& ring) {
  Result<Bytes> b = encodeFrame(f, ring);
  if (!b) std::abort();
  return *b;
}

}  // namespace tandem::wire::testing
