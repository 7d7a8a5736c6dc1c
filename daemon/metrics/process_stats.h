#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

// What tandemd reports of itself (process_* in conf/metrics.md), read from /proc by the
// platform and parsed here. Pure.
namespace tandem::metrics {

struct ProcessStats {
  double cpu_seconds = 0;       // user + system
  uint64_t resident_bytes = 0;  // RSS
  uint64_t open_fds = 0;
  double start_time_seconds = 0;  // since the Unix epoch
};

// The fields of /proc/self/stat that matter, in clock ticks and pages.
struct ProcStat {
  uint64_t utime_ticks = 0;
  uint64_t stime_ticks = 0;
  uint64_t start_ticks = 0;  // since boot
  uint64_t rss_pages = 0;
};

// /proc/PID/stat: "pid (comm) state ppid ..." where comm may hold spaces and parentheses, so
// the fields are counted from the last ')'. nullopt for text that is not one.
std::optional<ProcStat> parseProcStat(std::string_view text);
// /proc/stat's "btime SECONDS" line: when the machine booted.
std::optional<uint64_t> parseBootTime(std::string_view text);

ProcessStats processStats(const ProcStat& stat, uint64_t boot_time, long ticks_per_second,
                          long page_size, uint64_t open_fds);

}  // namespace tandem::metrics
