#pragma once

#include <cstdint>
#include <optional>

namespace tandem {

// Connection sync on one director, as its sync subsystem sees it after each pass: what the
// heartbeats carry (wire/heartbeat.h), what a sync-aware failback waits for (the connections
// and how long the backup daemon has run) and what `tandem sync status` shows per node.
struct SyncReport {
  uint64_t connections = 0;  // the entries of its IPVS connection table (templates excluded)
  uint64_t templates = 0;    // the persistence templates in the same table
  bool backup_running = false;
  // How long ago its backup daemon last heard a sync message for its sync id; nullopt when
  // none was heard (or nothing listens beside it).
  std::optional<int64_t> heard_ago_ms;

  friend bool operator==(const SyncReport&, const SyncReport&) = default;
};

}  // namespace tandem
