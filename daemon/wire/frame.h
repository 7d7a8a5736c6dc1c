#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "common/byte_io.h"
#include "common/result.h"
#include "wire/key_ring.h"
#include "wire/rejection.h"

// The frame every tandem message travels in, over Corosync CPG and over UDP alike. Version 1,
// all integers in network byte order:
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |      'T'      |      'N'      |      'D'      |      'M'      |
//   +---------------+---------------+-------------------------------+
//   |  version = 1  |     type      |        flags (0 in v1)        |
//   +---------------+---------------+---------------+---------------+
//   |            key_id             |  cluster_len  |  cluster ...  :
//   +-------------------------------+---------------+               :
//   :                cluster name (cluster_len bytes)               :
//   +---------------+-----------------------------------------------+
//   |  sender_len   |  sender node name (1..64 bytes)               :
//   +---------------+-----------------------------------------------+
//   |                   incarnation (8 bytes)                       |
//   |                                                               |
//   +---------------------------------------------------------------+
//   |                     sequence (8 bytes)                        |
//   |                                                               |
//   +-------------------------------+-------------------------------+
//   |          payload_len          |  payload (0..1024 bytes) ...  :
//   +-------------------------------+-------------------------------+
//   |   HMAC-SHA256 under key key_id of every byte above (32 bytes) |
//   :                                                               :
//   +---------------------------------------------------------------+
//
// - The cluster name is inside the MAC, so a frame from another cluster that happens to share
//   the key cannot be passed off as ours by rewriting the name.
// - flags are covered by the MAC and ignored by v1 receivers: a later sender may set advisory
//   bits without locking out v1 nodes. Anything that changes the meaning of a frame bumps the
//   version instead.
// - One frame per datagram: bytes after the MAC are rejected (oversized), so every frame has
//   exactly one encoding and golden tests can pin it.
// - Incarnation and sequence feed the ReplayGuard (replay_guard.h).
namespace tandem::wire {

inline constexpr std::array<uint8_t, 4> kMagic = {'T', 'N', 'D', 'M'};
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kMaxClusterNameBytes = 255;
inline constexpr size_t kMaxNodeNameBytes = 64;
inline constexpr size_t kMaxPayloadBytes = 1024;
// magic, version, type, flags, key_id, the two name lengths, incarnation, sequence, payload_len.
inline constexpr size_t kFixedHeaderBytes = 4 + 1 + 1 + 2 + 2 + 1 + 1 + 8 + 8 + 2;
inline constexpr size_t kMinFrameBytes = kFixedHeaderBytes + 1 + kMacBytes;  // 1: sender name
inline constexpr size_t kMaxFrameBytes =
    kFixedHeaderBytes + kMaxClusterNameBytes + kMaxNodeNameBytes + kMaxPayloadBytes + kMacBytes;
// One unfragmented UDP datagram over IPv6 on a 1500-byte Ethernet link (1500 - 40 - 8).
static_assert(kMaxFrameBytes <= 1452);

enum class FrameType : uint8_t {
  kHeartbeat = 1,  // payload: Heartbeat (heartbeat.h)
  kRelease = 2,    // payload: Release (release.h), a planned handover
  kAdmin = 3,      // reserved for admin commands; the payload is opaque until they are defined
};

std::string_view frameTypeName(FrameType t);  // "heartbeat", "release", "admin"

struct Frame {
  FrameType type = FrameType::kHeartbeat;
  uint16_t flags = 0;
  // Decoding: the key the sender signed with. Encoding ignores it and writes the ring's active
  // key, so a sender can never sign with a key it did not mean to.
  uint16_t key_id = 0;
  std::string cluster;
  std::string sender;
  uint64_t incarnation = 0;
  uint64_t sequence = 0;
  Bytes payload;

  friend bool operator==(const Frame&, const Frame&) = default;
};

// The configured peers' node names. Leave this node's own name out: a frame carrying it is a
// reflection of our own traffic (or CPG delivering our message back to us) and is then rejected
// as unknown_node. std::less<> so that lookups take a string_view.
using NodeSet = std::set<std::string, std::less<>>;

// Everything but the MAC, as encodeFrame writes it (with the given key_id). For tests and the
// fuzzer, which check that decoding gives back exactly the bytes that were signed.
Result<Bytes> encodeUnsigned(const Frame& frame);

// Signs with the ring's active key. Fails for names or payloads outside the limits above (the
// cluster 1..255 bytes, the sender 1..64), or when the ring has no active key.
Result<Bytes> encodeFrame(const Frame& frame, const KeyRing& keys);

// Structure only: any byte string gives a Frame or the first defect found, reading front to
// back, and nothing in the Frame is authentic yet. A zero-length sender name is structurally
// fine here and falls to unknown_node in verifyFrame (no configured node has an empty name).
Checked<Frame> decodeFrame(ByteView bytes);

// decodeFrame, then, in this order:
//   wrong_cluster  - before the MAC, on purpose: a frame for another cluster is not addressed to
//                    us (like a foreign destination address), and two clusters on one network
//                    with different keys then show up as such, not as a forgery. It proves
//                    nothing, and nothing is learnt from such a frame.
//   unknown_key    - the ring has no key key_id.
//   bad_signature  - the MAC does not match.
//   unknown_node   - authentic, but the sender is not in peers.
// Replay is not checked here (see ReplayGuard), nor the payload (see FrameReceiver).
Checked<Frame> verifyFrame(ByteView bytes, const KeyRing& keys, std::string_view cluster,
                           const NodeSet& peers);

}  // namespace tandem::wire
