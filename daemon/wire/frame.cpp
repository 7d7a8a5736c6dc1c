#include "wire/frame.h"

#include <algorithm>

namespace tandem::wire {

namespace {

bool isKnownType(uint8_t t) {
  return t == static_cast<uint8_t>(FrameType::kHeartbeat) ||
         t == static_cast<uint8_t>(FrameType::kRelease) ||
         t == static_cast<uint8_t>(FrameType::kAdmin);
}

}  // namespace

std::string_view frameTypeName(FrameType t) {
  switch (t) {
    case FrameType::kHeartbeat:
      return "heartbeat";
    case FrameType::kRelease:
      return "release";
    case FrameType::kAdmin:
      return "admin";
  }
  return "unknown";
}

Result<Bytes> encodeUnsigned(const Frame& frame) {
  if (frame.cluster.empty() || frame.cluster.size() > kMaxClusterNameBytes) {
    return fail(ErrorCode::kInvalidArgument,
                "the cluster name must be 1 to " + std::to_string(kMaxClusterNameBytes) + " bytes");
  }
  if (frame.sender.empty() || frame.sender.size() > kMaxNodeNameBytes) {
    return fail(ErrorCode::kInvalidArgument,
                "the node name must be 1 to " + std::to_string(kMaxNodeNameBytes) + " bytes");
  }
  if (frame.payload.size() > kMaxPayloadBytes) {
    return fail(ErrorCode::kInvalidArgument,
                "a payload of " + std::to_string(frame.payload.size()) +
                    " bytes is over the limit of " + std::to_string(kMaxPayloadBytes));
  }
  if (!isKnownType(static_cast<uint8_t>(frame.type))) {
    return fail(ErrorCode::kInvalidArgument, "unknown frame type");
  }
  ByteWriter w;
  w.bytes(kMagic);
  w.u8(kVersion);
  w.u8(static_cast<uint8_t>(frame.type));
  w.u16(frame.flags);
  w.u16(frame.key_id);
  w.u8(static_cast<uint8_t>(frame.cluster.size()));
  w.bytes(asBytes(frame.cluster));
  w.u8(static_cast<uint8_t>(frame.sender.size()));
  w.bytes(asBytes(frame.sender));
  w.u64(frame.incarnation);
  w.u64(frame.sequence);
  w.u16(static_cast<uint16_t>(frame.payload.size()));
  w.bytes(frame.payload);
  return std::move(w).take();
}

Result<Bytes> encodeFrame(const Frame& frame, const KeyRing& keys) {
  if (keys.activeId() == KeyRing::kNoKey) {
    return fail(ErrorCode::kInvalidArgument, "the key ring has no active key");
  }
  Frame signed_frame = frame;
  signed_frame.key_id = keys.activeId();
  Result<Bytes> out = encodeUnsigned(signed_frame);
  if (!out) return out;
  Result<Mac> mac = keys.sign(*out);
  if (!mac) return fail(mac.error());
  out->insert(out->end(), mac->begin(), mac->end());
  return out;
}

Checked<Frame> decodeFrame(ByteView bytes) {
  // Checked first so that no parsing effort is spent on a datagram that cannot be a frame.
  if (bytes.size() > kMaxFrameBytes) return Rejection::kOversized;
  ByteReader r(bytes);
  ByteView magic = r.bytes(kMagic.size());
  if (!r.ok()) return Rejection::kTruncated;
  if (!std::equal(magic.begin(), magic.end(), kMagic.begin())) return Rejection::kBadMagic;
  // The version is judged before anything after it is read: another version may lay out the
  // rest differently.
  uint8_t version = r.u8();
  if (!r.ok()) return Rejection::kTruncated;
  if (version != kVersion) return Rejection::kUnknownVersion;
  uint8_t type = r.u8();
  if (!r.ok()) return Rejection::kTruncated;
  if (!isKnownType(type)) return Rejection::kUnknownType;

  Frame f;
  f.type = static_cast<FrameType>(type);
  f.flags = r.u16();
  f.key_id = r.u16();
  f.cluster = std::string(asText(r.bytes(r.u8())));
  uint8_t sender_len = r.u8();
  if (!r.ok()) return Rejection::kTruncated;
  if (sender_len > kMaxNodeNameBytes) return Rejection::kOversized;
  f.sender = std::string(asText(r.bytes(sender_len)));
  f.incarnation = r.u64();
  f.sequence = r.u64();
  uint16_t payload_len = r.u16();
  if (!r.ok()) return Rejection::kTruncated;
  if (payload_len > kMaxPayloadBytes) return Rejection::kOversized;
  ByteView payload = r.bytes(payload_len);
  f.payload.assign(payload.begin(), payload.end());
  r.bytes(kMacBytes);
  if (!r.ok()) return Rejection::kTruncated;
  if (r.remaining() != 0) return Rejection::kOversized;
  return f;
}

Checked<Frame> verifyFrame(ByteView bytes, const KeyRing& keys, std::string_view cluster,
                           const NodeSet& peers) {
  Checked<Frame> f = decodeFrame(bytes);
  if (!f) return f;
  if (f->cluster != cluster) return Rejection::kWrongCluster;
  if (!keys.contains(f->key_id)) return Rejection::kUnknownKey;
  // decodeFrame guarantees the MAC is exactly the last kMacBytes.
  ByteView signed_part = bytes.first(bytes.size() - kMacBytes);
  if (!keys.verify(f->key_id, signed_part, bytes.last(kMacBytes))) {
    return Rejection::kBadSignature;
  }
  if (!peers.contains(f->sender)) return Rejection::kUnknownNode;
  return f;
}

}  // namespace tandem::wire
