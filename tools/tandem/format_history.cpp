#include "format_history.h"

#include <ctime>
#include <vector>

#include "common/duration.h"
#include "format_table.h"

namespace tandem::cli {

namespace {

using nlohmann::json;

std::string durationOf(const json& e) {
  auto d = e.find("duration_ms");
  if (d == e.end() || !d->is_number_integer()) return "";
  return " in " + formatAge(d->get<int64_t>());
}

}  // namespace

Result<uint64_t> parseSince(const std::string& text, uint64_t now_ms) {
  if (auto d = parseDuration(text)) {
    const auto back = static_cast<uint64_t>(d->count());
    return back > now_ms ? 0 : now_ms - back;
  }
  for (const char* format : {"%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"}) {
    std::tm tm{};
    const char* end = strptime(text.c_str(), format, &tm);
    if (end == nullptr || *end != '\0') continue;
    tm.tm_isdst = -1;  // whatever the local rules say for that day
    const std::time_t t = std::mktime(&tm);
    if (t < 0) break;
    return static_cast<uint64_t>(t) * 1000;
  }
  return fail(ErrorCode::kInvalidArgument,
              "--since \"" + text +
                  "\" is neither a duration back from now (30m, 2h) nor a local time "
                  "(2026-12-03 14:05)");
}

std::string formatWallClock(uint64_t ms) {
  const auto secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  const std::string frac = std::to_string(1000 + ms % 1000).substr(1);
  return std::string(buf) + "." + frac;
}

CommandOutput renderHistory(const Result<json>& answer, bool json_output) {
  return renderAnswer(answer, json_output, "tandem history", [](const json& body) {
    auto entries = body.find("entries");
    if (entries == body.end() || !entries->is_array() || entries->empty()) {
      return "No history on " + textOf(body, "node") + " for that time.\n";
    }
    std::vector<Row> rows{{"Time", "Kind", "What", "Why"}};
    for (const json& e : *entries) {
      if (!e.is_object()) continue;
      auto at = e.find("at_ms");
      const std::string when = at != e.end() && at->is_number_unsigned()
                                   ? formatWallClock(at->get<uint64_t>())
                                   : std::string(kUnknown);
      rows.push_back(
          {when, textOf(e, "kind"), textOf(e, "what") + durationOf(e), textOf(e, "reason")});
    }
    return "History of " + textOf(body, "node") + " (the last " + numberOf(body, "capacity") +
           " entries are kept):\n" + table(rows);
  });
}

}  // namespace tandem::cli
