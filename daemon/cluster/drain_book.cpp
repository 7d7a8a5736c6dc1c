#include "cluster/drain_book.h"

#include <algorithm>
#include <charconv>

namespace tandem::cluster {

namespace {

void normalize(std::vector<DrainTarget>& targets) {
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
}

}  // namespace

bool DrainBook::drained(const DrainTarget& t) const {
  return std::binary_search(targets_.begin(), targets_.end(), t);
}

Result<bool> DrainBook::set(const DrainTarget& t, bool on, uint64_t generation) {
  if (drained(t) == on) return false;
  if (on && targets_.size() >= kMaxDrains) {
    return fail(ErrorCode::kInvalidArgument,
                "at most " + std::to_string(kMaxDrains) +
                    " real servers can be drained at once (the set rides in every heartbeat); "
                    "enable one first");
  }
  if (on) {
    targets_.insert(std::lower_bound(targets_.begin(), targets_.end(), t), t);
  } else {
    targets_.erase(std::lower_bound(targets_.begin(), targets_.end(), t));
  }
  generation_ = std::max(generation, generation_ + 1);
  return true;
}

bool DrainBook::adopt(uint64_t generation, std::vector<DrainTarget> targets) {
  if (generation < generation_) return false;
  normalize(targets);
  if (targets.size() > kMaxDrains) targets.resize(kMaxDrains);
  if (generation == generation_ && !(targets > targets_)) return false;
  generation_ = generation;
  targets_ = std::move(targets);
  return true;
}

std::string DrainBook::serialize() const {
  std::string out = "generation " + std::to_string(generation_) + "\n";
  for (const DrainTarget& t : targets_) out += t.toString() + "\n";
  return out;
}

Result<DrainBook> DrainBook::parse(std::string_view text) {
  DrainBook book;
  size_t line_no = 0;
  bool seen_generation = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (!seen_generation) {
      constexpr std::string_view kPrefix = "generation ";
      uint64_t g = 0;
      const char* end = line.data() + line.size();
      // Wall-clock ms (ClusterNode::nextGeneration): not beyond the year 9999, which no later
      // drain could then beat.
      constexpr uint64_t kLatest = 253402300799999;
      if (line.substr(0, kPrefix.size()) != kPrefix || line.size() == kPrefix.size() ||
          std::from_chars(line.data() + kPrefix.size(), end, g).ptr != end || g > kLatest) {
        return fail(ErrorCode::kInvalidArgument,
                    where + "not \"generation N\": \"" + std::string(line) + "\"");
      }
      book.generation_ = g;
      seen_generation = true;
      continue;
    }
    auto t = DrainTarget::parse(line);
    if (!t) {
      return fail(ErrorCode::kInvalidArgument, where +
                                                   "not a drain (\"tcp ADDR:PORT ADDR:PORT\" "
                                                   "or \"fwmark N (IPv4|IPv6) ADDR:PORT\"): \"" +
                                                   std::string(line) + "\"");
    }
    book.targets_.push_back(*t);
  }
  normalize(book.targets_);
  if (book.targets_.size() > kMaxDrains) {
    return fail(ErrorCode::kInvalidArgument, "more than " + std::to_string(kMaxDrains) + " drains");
  }
  return book;
}

}  // namespace tandem::cluster
