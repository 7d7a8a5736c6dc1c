#include "director/history.h"

#include <sstream>

namespace tandem::director {

nlohmann::json toJson(const HistoryEntry& e) {
  nlohmann::json j{{"at_ms", e.at_ms}, {"kind", e.kind}, {"what", e.what}, {"reason", e.reason}};
  j["duration_ms"] = e.duration_ms ? nlohmann::json(*e.duration_ms) : nlohmann::json(nullptr);
  return j;
}

void History::add(HistoryEntry e) {
  entries_.push_back(std::move(e));
  while (entries_.size() > capacity_) entries_.pop_front();
}

std::vector<HistoryEntry> History::since(uint64_t since_ms) const {
  std::vector<HistoryEntry> out;
  for (const HistoryEntry& e : entries_) {
    if (e.at_ms >= since_ms) out.push_back(e);
  }
  return out;
}

std::string History::serialize() const {
  std::string out;
  // A reason may hold what a real server sent (an exec check's output, cut at a byte count):
  // bytes that are not UTF-8 are replaced, never a throw on the loop.
  for (const HistoryEntry& e : entries_) {
    out += toJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return out;
}

History History::parse(const std::string& text, size_t capacity, size_t* skipped) {
  History h(capacity);
  size_t bad = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    auto str = [&j](const char* key) {
      auto it = j.find(key);
      return it != j.end() && it->is_string() ? std::optional(it->get<std::string>())
                                              : std::nullopt;
    };
    if (!j.is_object() || !j.contains("at_ms") || !j["at_ms"].is_number_unsigned() ||
        !str("kind") || !str("what")) {
      ++bad;
      continue;
    }
    HistoryEntry e{j["at_ms"].get<uint64_t>(), *str("kind"), *str("what"),
                   str("reason").value_or(""), std::nullopt};
    if (auto d = j.find("duration_ms"); d != j.end() && d->is_number_integer()) {
      e.duration_ms = d->get<int64_t>();
    }
    h.add(std::move(e));
  }
  if (skipped != nullptr) *skipped = bad;
  return h;
}

}  // namespace tandem::director
