#include "wire/sealer.h"

#include <limits>
#include <utility>

namespace tandem::wire {

FrameSealer::FrameSealer(std::string cluster, std::string node, uint64_t incarnation,
                         uint64_t first_sequence)
    : cluster_(std::move(cluster)),
      node_(std::move(node)),
      incarnation_(incarnation),
      next_sequence_(first_sequence) {}

Result<Bytes> FrameSealer::seal(FrameType type, ByteView payload, const KeyRing& keys) {
  // Unreachable in practice (2^64 frames), but wrapping would make every later frame a replay.
  if (next_sequence_ == std::numeric_limits<uint64_t>::max()) {
    return fail(ErrorCode::kUnavailable, "the sequence is exhausted; start a new incarnation");
  }
  Frame f;
  f.type = type;
  f.cluster = cluster_;
  f.sender = node_;
  f.incarnation = incarnation_;
  f.sequence = next_sequence_;
  f.payload.assign(payload.begin(), payload.end());
  Result<Bytes> out = encodeFrame(f, keys);
  if (out) ++next_sequence_;
  return out;
}

Result<Bytes> FrameSealer::sealHeartbeat(const Heartbeat& hb, const KeyRing& keys) {
  Result<Bytes> payload = encodeHeartbeat(hb);
  if (!payload) return payload;
  return seal(FrameType::kHeartbeat, *payload, keys);
}

Result<Bytes> FrameSealer::sealRelease(const Release& rel, const KeyRing& keys) {
  Result<Bytes> payload = encodeRelease(rel);
  if (!payload) return payload;
  return seal(FrameType::kRelease, *payload, keys);
}

}  // namespace tandem::wire
