#include "metrics/process_stats.h"

#include <charconv>

namespace tandem::metrics {
namespace {

std::optional<uint64_t> number(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<ProcStat> parseProcStat(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(close + 1);
  // After the comm: field 3 (state) is the first. utime is field 14, stime 15, starttime 22,
  // rss 24 (proc(5)).
  ProcStat st;
  int field = 2;
  bool got_rss = false;
  while (!rest.empty()) {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\n')) rest.remove_prefix(1);
    if (rest.empty()) break;
    size_t end = rest.find_first_of(" \n");
    std::string_view word = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    ++field;
    if (field != 14 && field != 15 && field != 22 && field != 24) continue;
    auto v = number(word);
    if (!v) return std::nullopt;
    if (field == 14) st.utime_ticks = *v;
    if (field == 15) st.stime_ticks = *v;
    if (field == 22) st.start_ticks = *v;
    if (field == 24) {
      st.rss_pages = *v;
      got_rss = true;
      break;
    }
  }
  if (!got_rss) return std::nullopt;
  return st;
}

std::optional<uint64_t> parseBootTime(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    std::string_view line = text.substr(at, nl == std::string_view::npos ? nl : nl - at);
    if (line.substr(0, 6) == "btime ") return number(line.substr(6));
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  return std::nullopt;
}

ProcessStats processStats(const ProcStat& stat, uint64_t boot_time, long ticks_per_second,
                          long page_size, uint64_t open_fds) {
  ProcessStats p;
  const double hz = ticks_per_second > 0 ? static_cast<double>(ticks_per_second) : 100.0;
  p.cpu_seconds = static_cast<double>(stat.utime_ticks + stat.stime_ticks) / hz;
  p.resident_bytes = stat.rss_pages * static_cast<uint64_t>(page_size > 0 ? page_size : 4096);
  p.open_fds = open_fds;
  p.start_time_seconds =
      static_cast<double>(boot_time) + static_cast<double>(stat.start_ticks) / hz;
  return p;
}

}  // namespace tandem::metrics
