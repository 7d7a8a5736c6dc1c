#pragma once

#include <cstdint>

// An incarnation names one run of a sender's daemon. The high 48 bits are the run's start time
// in ms since the Unix epoch, the low 16 bits random: a restart orders after the previous run,
// and two runs started in the same ms (a crash loop) still differ. The caller reads the clock
// and the random source; nothing here does.
namespace tandem::wire {

inline constexpr uint64_t kIncarnationRandomBits = 16;

// start_unix_ms keeps its low 48 bits (good until the year 10889).
constexpr uint64_t makeIncarnation(uint64_t start_unix_ms, uint16_t random) {
  return (start_unix_ms << kIncarnationRandomBits) | random;
}

constexpr uint64_t incarnationStartMs(uint64_t incarnation) {
  return incarnation >> kIncarnationRandomBits;
}

}  // namespace tandem::wire
