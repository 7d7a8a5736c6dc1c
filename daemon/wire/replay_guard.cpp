#include "wire/replay_guard.h"

namespace tandem::wire {

namespace {

std::optional<Rejection> judge(const ReplayWindow& w, uint64_t incarnation, uint64_t sequence) {
  if (incarnation > w.incarnation) return std::nullopt;
  if (incarnation < w.incarnation) return Rejection::kStaleIncarnation;
  if (sequence > w.top) return std::nullopt;
  uint64_t behind = w.top - sequence;
  if (behind >= kReplayWindow) return Rejection::kReplayed;
  if ((w.seen >> behind) & 1u) return Rejection::kReplayed;
  return std::nullopt;
}

}  // namespace

std::optional<Rejection> ReplayGuard::check(std::string_view sender, uint64_t incarnation,
                                            uint64_t sequence) const {
  const ReplayWindow* w = window(sender);
  if (w == nullptr) return std::nullopt;
  return judge(*w, incarnation, sequence);
}

std::optional<Rejection> ReplayGuard::admit(std::string_view sender, uint64_t incarnation,
                                            uint64_t sequence) {
  auto it = windows_.find(sender);
  if (it == windows_.end()) {
    windows_.emplace(std::string(sender), ReplayWindow{incarnation, sequence, 1});
    return std::nullopt;
  }
  ReplayWindow& w = it->second;
  if (auto r = judge(w, incarnation, sequence)) return r;
  if (incarnation > w.incarnation) {
    w = ReplayWindow{incarnation, sequence, 1};
  } else if (sequence > w.top) {
    uint64_t ahead = sequence - w.top;
    // Shifting a 64-bit value by 64 or more is undefined; a jump that far empties the window.
    w.seen = ahead >= kReplayWindow ? 1 : (w.seen << ahead) | 1;
    w.top = sequence;
  } else {
    w.seen |= uint64_t{1} << (w.top - sequence);
  }
  return std::nullopt;
}

void ReplayGuard::forget(std::string_view sender) {
  auto it = windows_.find(sender);
  if (it != windows_.end()) windows_.erase(it);
}

const ReplayWindow* ReplayGuard::window(std::string_view sender) const {
  auto it = windows_.find(sender);
  return it == windows_.end() ? nullptr : &it->second;
}

}  // namespace tandem::wire
