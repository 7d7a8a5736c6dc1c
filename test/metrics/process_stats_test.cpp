#include "metrics/process_stats.h"

#include <gtest/gtest.h>

namespace tandem::metrics {
namespace {

// A /proc/self/stat of a process whose comm holds a space and a parenthesis.
constexpr const char* kStat =
    "4242 (tan dem) d) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 1 0 123456 "
    "44040192 2560 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(ProcessStats, ParsesStatAfterTheLastParenthesis) {
  auto st = parseProcStat(kStat);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->utime_ticks, 250u);
  EXPECT_EQ(st->stime_ticks, 50u);
  EXPECT_EQ(st->start_ticks, 123456u);
  EXPECT_EQ(st->rss_pages, 2560u);
}

TEST(ProcessStats, RefusesWhatIsNotAStatLine) {
  EXPECT_FALSE(parseProcStat(""));
  EXPECT_FALSE(parseProcStat("4242 (x) S 1 2 3"));
  EXPECT_FALSE(parseProcStat("4242 (x) S 1 2 3 4 5 6 7 8 9 10 zz 50 0 0 0 0 0 0 1 2 3 4"));
}

TEST(ProcessStats, BootTimeFromProcStat) {
  EXPECT_EQ(parseBootTime("cpu  1 2 3\nintr 5\nbtime 1764900000\nprocesses 9\n"), 1764900000u);
  EXPECT_FALSE(parseBootTime("cpu 1\n"));
}

TEST(ProcessStats, ConvertsTicksAndPages) {
  auto st = parseProcStat(kStat);
  ASSERT_TRUE(st);
  ProcessStats p = processStats(*st, 1764900000, 100, 4096, 17);
  EXPECT_DOUBLE_EQ(p.cpu_seconds, 3.0);
  EXPECT_EQ(p.resident_bytes, 2560u * 4096u);
  EXPECT_EQ(p.open_fds, 17u);
  EXPECT_DOUBLE_EQ(p.start_time_seconds, 1764900000.0 + 1234.56);
}

}  // namespace
}  // namespace tandem::metrics
