#include "wire/release.h"

#include "wire/frame.h"

namespace tandem::wire {

namespace {

bool isKnownKind(uint8_t k) {
  return k == static_cast<uint8_t>(ReleaseKind::kRequest) ||
         k == static_cast<uint8_t>(ReleaseKind::kReleased);
}

}  // namespace

std::string_view releaseKindName(ReleaseKind k) {
  switch (k) {
    case ReleaseKind::kRequest:
      return "request";
    case ReleaseKind::kReleased:
      return "released";
  }
  return "unknown";
}

Result<Bytes> encodeRelease(const Release& rel) {
  if (!isKnownKind(static_cast<uint8_t>(rel.kind))) {
    return fail(ErrorCode::kInvalidArgument, "unknown release kind");
  }
  if (rel.target.size() > kMaxNodeNameBytes) {
    return fail(ErrorCode::kInvalidArgument, "the target is longer than a node name");
  }
  ByteWriter w;
  w.u8(static_cast<uint8_t>(rel.kind));
  w.u8(static_cast<uint8_t>(rel.target.size()));
  w.bytes(asBytes(rel.target));
  w.u64(rel.epoch);
  return std::move(w).take();
}

Checked<Release> decodeRelease(ByteView payload) {
  ByteReader r(payload);
  uint8_t kind = r.u8();
  uint8_t target_len = r.u8();
  if (!r.ok() || !isKnownKind(kind) || target_len > kMaxNodeNameBytes) {
    return Rejection::kBadPayload;
  }
  Release rel;
  rel.kind = static_cast<ReleaseKind>(kind);
  rel.target = std::string(asText(r.bytes(target_len)));
  rel.epoch = r.u64();
  if (!r.ok()) return Rejection::kBadPayload;
  return rel;
}

}  // namespace tandem::wire
