#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/byte_io.h"
#include "common/drain.h"
#include "common/result.h"
#include "wire/rejection.h"

// The payload of a heartbeat frame: what a director tells its peers about itself, every
// heartbeat interval. Network byte order:
//
//   offset  size  field
//        0     1  role (Role)
//        1     1  priority (the node's configured priority, 0..255)
//        2     2  health, per mille 0..1000
//        4     1  flags: bit0 standby, bit1 quorate, bit2 tiebreaker_ok, bit3 resources_held,
//                 bit4 maintenance; bits 5-7 are ignored on receipt (room for new flags)
//        5     1  V = active_view length, 0..64 (0: this node sees no active director)
//        6     V  active_view: the node this one believes is active
//      6+V     8  election epoch: bumped by a node on takeover, so an older view loses
//     14+V     4  heartbeat interval in ms, > 0 (a receiver sizes its dead timer from it)
//     18+V     8  move generation: orders operators' move requests cluster wide (0: none yet)
//     26+V     1  M = move target length, 0..64 (0: no move in force)
//     27+V     M  move target: the node an operator moved the services to
//   27+V+M     8  connections: the entries of this director's IPVS connection table
//   35+V+M     4  sync backup ms: how long its IPVS sync backup daemon has run without a
//                 break, saturating (0: none runs); with connections, what a sync-aware
//                 failback waits for
//   39+V+M     8  templates: the persistence templates in the same table
//   47+V+M     4  sync heard ms: how long before this heartbeat its backup daemon last heard a
//                 sync message for its sync id, saturating; 0xffffffff: none heard (or no
//                 backup daemon). With templates, what `tandem sync status` shows per node
//   51+V+M     8  maintenance generation: orders operators' maintenance on/off cluster wide,
//                 like the move generation (0: never set); the state is flag bit4
//   59+V+M     4  move lifetime ms: how long the move in force has left (0: until cleared);
//                 a node that adopts the move from this heartbeat expires it that much later
//   63+V+M     8  drain generation: orders operators' drains cluster wide, like the move
//                 generation; written only once a drain was ever set (then never 0)
//   71+V+M     1  D = drains, 0..16 (kMaxDrains): the drained real servers, each
//                   1  protocol (6 tcp, 17 udp, 132 sctp; 0: a firewall-mark service), then
//                      for protocol 0: 1 family (4|6) and 4 fwmark (never 0); otherwise the
//                      address (1 family 4|6 and 4 or 16 bytes) and 2 port
//                   1+4|16+2  the real server: family, address, port
//                   4  its active connections in the sender's table, 4 the templates that
//                      point at it; 0xffffffff: not known (no dump at weight 0 yet)
//                 at most 47 bytes each
//   after         nothing yet; a decoder ignores bytes past what it knows, so fields can be
//                 added at the end without a version bump. A payload shorter than 18+V is
//                 rejected; one that ends at 18+V (an older sender) has no move, one that ends
//                 at 27+V+M none of the sync fields (read as 0), one that ends at 39+V+M no
//                 templates (0) and no heard age (none), one that ends at 51+V+M no
//                 maintenance generation (0) and no move lifetime (0), one that ends at
//                 63+V+M no drains (generation 0).
namespace tandem::wire {

enum class Role : uint8_t { kInit = 0, kBackup = 1, kActive = 2, kStandby = 3, kFault = 4 };

std::string_view roleName(Role r);  // "INIT", "BACKUP", "ACTIVE", "STANDBY", "FAULT"

inline constexpr uint16_t kMaxHealth = 1000;
inline constexpr size_t kHeartbeatMinBytes = 18;
// What re-encoding an older sender's payload adds at most: an empty move (9), the sync
// fields (12), the sync detail (12) and the operator fields (12). Decoding then encoding never
// grows a payload by more.
inline constexpr size_t kHeartbeatTailBytes = 9 + 12 + 12 + 12;
// The sync detail's size: what a sender before it did not write.
inline constexpr size_t kHeartbeatSyncDetailBytes = 12;
// The maintenance generation and the move lifetime: what a sender before them did not write.
inline constexpr size_t kHeartbeatOperatorBytes = 12;
inline constexpr uint32_t kSyncNeverHeard = 0xffffffff;

// A drained real server and how far its drain has come in the sender's own table.
struct DrainReport {
  DrainTarget target;
  DrainProgress progress;
  friend bool operator==(const DrainReport&, const DrainReport&) = default;
};

// One heartbeat: what the wire carries and what the election reads (election/cluster_core.h).
struct Heartbeat {
  // From the frame around the payload, not the payload: the receiver fills them in from the
  // verified frame, and the encoder does not write them.
  std::string sender;
  uint64_t incarnation = 0;

  Role role = Role::kInit;
  uint8_t priority = 0;
  uint16_t health = 0;
  bool standby = false;
  bool quorate = false;
  bool tiebreaker_ok = false;
  bool resources_held = false;
  std::string active_view;
  uint64_t epoch = 0;
  uint32_t interval_ms = 0;
  uint64_t move_generation = 0;
  std::string move_target;
  uint64_t connections = 0;
  uint32_t sync_backup_ms = 0;
  uint64_t templates = 0;
  std::optional<uint32_t> sync_heard_ms;  // nullopt: none heard; at most kSyncNeverHeard - 1
  bool maintenance = false;
  uint64_t maintenance_generation = 0;
  uint32_t move_lifetime_ms = 0;  // 0: the move stands until cleared
  uint64_t drain_generation = 0;  // 0: no drain was ever set (the section is not written)
  std::vector<DrainReport> drains;

  friend bool operator==(const Heartbeat&, const Heartbeat&) = default;
};

// Fails (invalid-argument) for what decodeHeartbeat would reject, so what a node sends is what
// its peers read.
Result<Bytes> encodeHeartbeat(const Heartbeat& hb);

// bad_payload for a payload shorter than its fields, a role past kFault, health over 1000, an
// active_view longer than a node name, an interval of 0, or a drain section that is not one
// (generation 0, over kMaxDrains, an unknown protocol or family, a firewall mark of 0).
Checked<Heartbeat> decodeHeartbeat(ByteView payload);

}  // namespace tandem::wire
