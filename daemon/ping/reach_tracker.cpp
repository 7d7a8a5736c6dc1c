#include "ping/reach_tracker.h"

#include <algorithm>

namespace tandem::ping {

namespace {

// More open rounds than this cannot happen within the configured ranges (timeout <= 1 min,
// interval >= 100 ms: 600), and the 16-bit sequence must stay unique among them.
constexpr size_t kMaxOpenRounds = 4096;

}  // namespace

std::string_view reachName(Reach r) {
  switch (r) {
    case Reach::kPending:
      return "pending";
    case Reach::kReached:
      return "reached";
    case Reach::kLost:
      return "lost";
  }
  return "?";
}

std::string joinAddresses(const std::vector<IpAddress>& addresses) {
  std::string out;
  for (const IpAddress& a : addresses) {
    if (!out.empty()) out += ", ";
    out += a.toString();
  }
  return out;
}

ReachTracker::ReachTracker(std::vector<IpAddress> targets, Millis timeout, Millis regain_after)
    : targets_(std::move(targets)), timeout_(timeout), regain_after_(regain_after) {}

uint16_t ReachTracker::startRound(Time now) {
  if (open_.size() >= kMaxOpenRounds) open_.pop_front();
  Round r{next_round_++, now};
  open_.push_back(r);
  return static_cast<uint16_t>(r.number);
}

std::optional<ReachChange> ReachTracker::onReply(Time now, const IpAddress& from,
                                                 uint16_t sequence) {
  if (std::find(targets_.begin(), targets_.end(), from) == targets_.end()) return std::nullopt;
  auto it = std::find_if(open_.begin(), open_.end(), [sequence](const Round& r) {
    return static_cast<uint16_t>(r.number) == sequence;
  });
  if (it == open_.end() || now >= it->sent + timeout_) return std::nullopt;
  open_.erase(open_.begin(), it + 1);
  if (state_ == Reach::kLost && regain_after_ > Millis(0)) {
    if (!answering_since_) answering_since_ = now;
    if (now - *answering_since_ < regain_after_) return std::nullopt;
    answering_since_.reset();
    return moveTo(Reach::kReached,
                  from.toString() + " answered for " + formatDuration(regain_after_));
  }
  return moveTo(Reach::kReached, from.toString() + " answered");
}

std::optional<ReachChange> ReachTracker::onTick(Time now) {
  bool expired = false;
  while (!open_.empty() && now >= open_.front().sent + timeout_) {
    open_.pop_front();
    expired = true;
  }
  if (!expired) return std::nullopt;
  answering_since_.reset();
  return moveTo(Reach::kLost, "none of " + joinAddresses(targets_) + " answered within " +
                                  formatDuration(timeout_));
}

std::optional<Time> ReachTracker::nextDeadline() const {
  if (open_.empty()) return std::nullopt;
  return open_.front().sent + timeout_;
}

std::optional<ReachChange> ReachTracker::moveTo(Reach next, std::string detail) {
  if (next == state_) return std::nullopt;
  ReachChange c{state_, next, std::move(detail)};
  state_ = next;
  return c;
}

}  // namespace tandem::ping
