#pragma once

#include <cstdint>
#include <optional>

// An incarnation names one run of a sender's daemon. The high 48 bits are the run's start time
// in ms since the Unix epoch, the low 16 bits random: a restart orders after the previous run,
// and two runs started in the same ms (a crash loop) still differ. The caller reads the clock
// and the random source; nothing here does. A receiver takes a higher incarnation as a restart
// and drops a lower one as stale, so a run must never order before the last: the daemon keeps
// the last one in its state directory and starts past it when the clock stepped back.
namespace tandem::wire {

inline constexpr uint64_t kIncarnationRandomBits = 16;

// start_unix_ms keeps its low 48 bits (good until the year 10889).
constexpr uint64_t makeIncarnation(uint64_t start_unix_ms, uint16_t random) {
  return (start_unix_ms << kIncarnationRandomBits) | random;
}

constexpr uint64_t incarnationStartMs(uint64_t incarnation) {
  return incarnation >> kIncarnationRandomBits;
}

// This run's incarnation: the clock's (makeIncarnation), or one past the last run's when that
// is not below it (a clock stepped back across the restart, or a crash loop within one ms).
constexpr uint64_t nextIncarnation(uint64_t from_clock, std::optional<uint64_t> last) {
  return last && *last >= from_clock && *last != UINT64_MAX ? *last + 1 : from_clock;
}

}  // namespace tandem::wire
