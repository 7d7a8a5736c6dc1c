#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/duration.h"
#include "common/ip_address.h"

namespace tandem::ping {

using Time = std::chrono::steady_clock::time_point;

// Whether this node reaches its tiebreaker targets.
enum class Reach {
  kPending,  // no round decided yet (just started)
  kReached,  // the latest decided round was answered by at least one target
  kLost,     // a round went unanswered by every target, and no later round was answered
};
std::string_view reachName(Reach r);

struct ReachChange {
  Reach from = Reach::kPending;
  Reach to = Reach::kPending;
  // For the log: "198.51.100.100 answered" or "none of 198.51.100.100 answered within 1s".
  std::string detail;
};

// The tiebreaker's verdict from ping rounds. Pure: the shell (pinger.h) starts a round every
// interval, sends the round's sequence number to every target, and reports replies and ticks
// here. A round is answered when any target replies to it within the timeout, and lost when
// the timeout passes without one. Rounds may overlap (timeout > interval); the newest evidence
// wins: an answer settles every older round still open, and a round that times out after a
// newer one was answered was already settled by it.
class ReachTracker {
 public:
  // regain_after: after a loss, how long the targets must keep answering (no round lost)
  // before the verdict is kReached again. The first answer only shows the link is back; the
  // node's peer, if it is on the same link, needs a moment to be heard again too, and a node
  // that leaves FAULT before that would take over beside it. 0: at the first answer.
  ReachTracker(std::vector<IpAddress> targets, Millis timeout, Millis regain_after = Millis(0));

  // Opens a round; returns the sequence number its echo requests carry.
  uint16_t startRound(Time now);
  // An echo reply from `from` carrying `sequence` (identifier and payload already checked).
  // Replies from other addresses, to unknown rounds or after the round's timeout are ignored.
  std::optional<ReachChange> onReply(Time now, const IpAddress& from, uint16_t sequence);
  // Closes the rounds whose timeout has passed.
  std::optional<ReachChange> onTick(Time now);

  // When onTick must run next: the oldest open round's timeout.
  std::optional<Time> nextDeadline() const;
  Reach state() const { return state_; }
  const std::vector<IpAddress>& targets() const { return targets_; }
  size_t openRounds() const { return open_.size(); }

 private:
  struct Round {
    uint64_t number = 0;
    Time sent{};
  };
  std::optional<ReachChange> moveTo(Reach next, std::string detail);

  std::vector<IpAddress> targets_;
  Millis timeout_;
  Millis regain_after_;
  std::optional<Time> answering_since_;  // while lost: the first answer since the last lost round
  std::deque<Round> open_;               // oldest first; deadlines are in the same order
  uint64_t next_round_ = 0;
  Reach state_ = Reach::kPending;
};

// "198.51.100.100", "198.51.100.100, 2001:db8::100".
std::string joinAddresses(const std::vector<IpAddress>& addresses);

}  // namespace tandem::ping
