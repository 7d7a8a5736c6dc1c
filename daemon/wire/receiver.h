#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/byte_io.h"
#include "wire/frame.h"
#include "wire/heartbeat.h"
#include "wire/key_ring.h"
#include "wire/rejection.h"
#include "wire/release.h"
#include "wire/replay_guard.h"

// The receiving half of the wire: bytes from either path in, a typed message or a counted
// rejection out. Pure: the transport hands it datagrams and CPG deliveries, nothing here reads
// a socket or a clock.
namespace tandem::wire {

// Admin frames are reserved: they pass the same checks as any frame and their payload is left
// opaque in Message::frame.payload for whoever defines them.
struct Admin {
  friend bool operator==(const Admin&, const Admin&) = default;
};

using Body = std::variant<Heartbeat, Release, Admin>;

struct Message {
  Frame frame;  // authentic, for this cluster, from a configured peer, not a replay
  Body body;    // frame.payload decoded according to frame.type
};

class FrameReceiver {
 public:
  // peers: the other nodes' names, not this node's own (see NodeSet).
  FrameReceiver(std::string cluster, NodeSet peers);

  // verifyFrame, then the payload (bad_payload), then the path: with `came_from` set (the node
  // the transport says sent it: CPG's nodeid, UDP's source address), a frame naming another
  // node is sender_mismatch; then the ReplayGuard, which records the frame only if everything
  // else passed; then the order: a frame the guard admits that is older (incarnation, then
  // sequence) than the last one returned from its sender is superseded, so that a late copy
  // never puts back what a newer frame replaced. Every call adds one to counters().
  Checked<Message> receive(ByteView bytes, const KeyRing& keys,
                           const std::optional<std::string>& came_from = std::nullopt);

  // A reload may change the peer list. Windows of removed peers are dropped; those of peers
  // that stay are kept, so a reload does not reopen a replay window.
  void setPeers(NodeSet peers);

  const FrameCounters& counters() const { return counters_; }
  const NodeSet& peers() const { return peers_; }
  const ReplayGuard& guard() const { return guard_; }

 private:
  Checked<Message> accept(ByteView bytes, const KeyRing& keys,
                          const std::optional<std::string>& came_from);

  std::string cluster_;
  NodeSet peers_;
  ReplayGuard guard_;
  FrameCounters counters_;
  // The (incarnation, sequence) of the last frame returned from each peer.
  std::map<std::string, std::pair<uint64_t, uint64_t>> newest_;
};

}  // namespace tandem::wire
