#pragma once

#include <cstdint>
#include <span>

#include "common/result.h"

// The header of one IPVS connection-sync message, as the kernel's backup daemon judges it
// (net/netfilter/ipvs/ip_vs_sync.c): a datagram whose length is not the size it declares is
// dropped, and so is one for another sync id, unless the backup's own sync id is 0.
namespace tandem::resources::sync {

struct SyncMessage {
  uint8_t version = 0;  // 0 or 1
  uint8_t sync_id = 0;
  uint16_t size = 0;
  uint8_t connections = 0;  // the connection entries it carries
};

// Version 1: reserved 0, sync id, size (big endian), nr_conns, version 1, spare 0 (8 bytes).
// Anything else of at least 4 bytes is version 0: nr_conns, sync id, size.
// Errors name what is wrong, for the status's "malformed" count and its last reason.
Result<SyncMessage> parseSyncMessage(std::span<const uint8_t> datagram);

// Whether a backup with this sync id applies the message: 0 takes every sync id.
inline bool backupTakes(uint32_t backup_sync_id, const SyncMessage& m) {
  return backup_sync_id == 0 || backup_sync_id == m.sync_id;
}

}  // namespace tandem::resources::sync
