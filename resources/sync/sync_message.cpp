#include "sync/sync_message.h"

#include <string>

namespace tandem::resources::sync {

namespace {
constexpr size_t kHeaderV0 = 4;
constexpr size_t kHeaderV1 = 8;
}  // namespace

Result<SyncMessage> parseSyncMessage(std::span<const uint8_t> d) {
  if (d.size() < kHeaderV0) {
    return fail(ErrorCode::kParse,
                std::to_string(d.size()) + "-byte datagram, shorter than a sync message header");
  }
  SyncMessage m;
  m.sync_id = d[1];
  m.size = static_cast<uint16_t>((d[2] << 8) | d[3]);
  if (m.size != d.size()) {
    return fail(ErrorCode::kParse, std::to_string(d.size()) + "-byte datagram declares " +
                                       std::to_string(m.size) + " bytes");
  }
  if (d[0] == 0 && d.size() >= kHeaderV1 && d[5] == 1 && d[6] == 0 && d[7] == 0) {
    m.version = 1;
    m.connections = d[4];
  } else {
    m.version = 0;
    m.connections = d[0];
  }
  return m;
}

}  // namespace tandem::resources::sync
