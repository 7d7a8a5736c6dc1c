#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

// What happened to this director, for `tandem history`: role changes with their reason,
// takeovers with how long they took, real-server transitions and admin actions. Bounded (the
// oldest go first) and kept in STATE_DIR/history as JSON lines, so that a restarted tandemd
// still knows what led up to it. Pure: the director feeds and persists it.
namespace tandem::director {

struct HistoryEntry {
  uint64_t at_ms = 0;                  // wall clock, ms since the epoch
  std::string kind;                    // "start", "role", "takeover", "real-server", "admin"
  std::string what;                    // "BACKUP -> ACTIVE", "web 203.0.113.11:80 down", ...
  std::string reason;                  // why, when there is one to give ("" otherwise)
  std::optional<int64_t> duration_ms;  // a takeover's, from TAKING_OVER to ACTIVE

  bool operator==(const HistoryEntry&) const = default;
};

nlohmann::json toJson(const HistoryEntry& e);

class History {
 public:
  static constexpr size_t kDefaultCapacity = 1000;
  explicit History(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  void add(HistoryEntry e);
  const std::deque<HistoryEntry>& entries() const { return entries_; }
  // Those at or after since_ms, oldest first.
  std::vector<HistoryEntry> since(uint64_t since_ms) const;

  // One JSON object per line, oldest first.
  std::string serialize() const;
  // Reads serialize()'s output back, keeping the newest capacity entries. A line that is not
  // an entry (a torn write, an edit) is skipped and counted in *skipped.
  static History parse(const std::string& text, size_t capacity, size_t* skipped);

 private:
  size_t capacity_;
  std::deque<HistoryEntry> entries_;
};

}  // namespace tandem::director
