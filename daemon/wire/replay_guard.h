#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "wire/incarnation.h"
#include "wire/rejection.h"

// Anti-replay for authentic frames, per sender.
//
// A sender numbers its frames with (incarnation, sequence): the incarnation names one run of
// the daemon (incarnation.h), the sequence counts the frames of that run.
//
// For each sender the guard keeps the newest incarnation it accepted and, within it, a 64-entry
// sliding window over sequence numbers, as IPsec does (RFC 4303, 3.4.3): `top` is the highest
// sequence accepted, bit i of `seen` says whether top - i was. A frame is
//   - accepted, and the window reset to it, when its incarnation is newer;
//   - stale_incarnation when its incarnation is older;
//   - accepted when its sequence is above top (the window slides up) or inside the window
//     (top-63 .. top) and not yet seen: frames arrive over two paths, CPG and UDP, and may
//     overtake each other;
//   - replayed when its sequence was seen, or is at or below the window's left edge
//     (top - 64 or less): too old to tell, so refused.
//
// Feed it only frames that passed the MAC and peer checks (FrameReceiver does): a forged frame
// must not be able to move a window, or it could lock a real sender out. That also bounds the
// map to the configured peers.
//
// What it does NOT protect against:
//   - A receiver that restarts has forgotten everything. It accepts a replay of any earlier
//     frame until the real sender's next frame supersedes it (one heartbeat interval). If the
//     real sender is down at that moment, an attacker holding a capture of a run can keep
//     feeding it, once per sequence number, and make the dead node look alive to the freshly
//     started receiver for as long as the capture lasts.
//   - A sender whose clock went back by more than the time since its previous start gets an
//     older incarnation, and peers that remember the previous one reject all of its frames as
//     stale_incarnation until they restart. The daemon persists its last incarnation and takes
//     max(makeIncarnation(now), last + 1) at start (nextIncarnation), within its state
//     directory's lifetime.
//   - Order: a frame inside the window is accepted although a newer one was; FrameReceiver
//     then refuses it as superseded, so that no older state is applied over a newer one.
//   - Delay: a frame held back and released later is accepted if nothing newer from the same
//     sender arrived meanwhile. Freshness beyond ordering is the election's job (the epoch and
//     the dead timer).
//   - Duplicates that are not attacks: if one frame is sent on both paths with the same
//     sequence, the second copy counts as replayed. Seal each path's copy separately
//     (FrameSealer hands out a new sequence per frame).
namespace tandem::wire {

inline constexpr uint64_t kReplayWindow = 64;

struct ReplayWindow {
  uint64_t incarnation = 0;
  uint64_t top = 0;   // highest sequence accepted in this incarnation
  uint64_t seen = 0;  // bit i: top - i was accepted

  friend bool operator==(const ReplayWindow&, const ReplayWindow&) = default;
};

class ReplayGuard {
 public:
  // What admit would say, without recording anything. nullopt: it would be accepted.
  std::optional<Rejection> check(std::string_view sender, uint64_t incarnation,
                                 uint64_t sequence) const;
  // Checks and, if accepted (nullopt), records the frame so that it is not accepted again.
  std::optional<Rejection> admit(std::string_view sender, uint64_t incarnation, uint64_t sequence);

  // Drops a sender's window, e.g. when a reload removes the node. Do not call it on a dead
  // timer: forgetting a dead node is exactly when replaying its frames would do harm.
  void forget(std::string_view sender);

  const ReplayWindow* window(std::string_view sender) const;
  size_t size() const { return windows_.size(); }

 private:
  std::map<std::string, ReplayWindow, std::less<>> windows_;
};

}  // namespace tandem::wire
