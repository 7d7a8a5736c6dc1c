#include "common/duration.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(Duration, ReadsEachUnit) {
  EXPECT_EQ(parseDuration("250ms"), Millis(250));
  EXPECT_EQ(parseDuration("2s"), Millis(2000));
  EXPECT_EQ(parseDuration("5m"), Millis(300000));
  EXPECT_EQ(parseDuration("1h"), Millis(3600000));
  EXPECT_EQ(parseDuration("0s"), Millis(0));
}

TEST(Duration, AddsCompoundSpellings) {
  EXPECT_EQ(parseDuration("1m30s"), Millis(90000));
  EXPECT_EQ(parseDuration("1s500ms"), Millis(1500));
}

TEST(Duration, RejectsWhatIsNotADuration) {
  for (const char* bad : {"", "5", "s", "-1s", "1.5s", "1 s", "1sec", "2S", "ms", "1s ", "x1s"}) {
    EXPECT_FALSE(parseDuration(bad).has_value()) << bad;
  }
}

TEST(Duration, RejectsValuesPastWhatATimerHolds) {
  EXPECT_FALSE(parseDuration("99999999999999999999s").has_value());
  EXPECT_FALSE(parseDuration("1000h").has_value());
  EXPECT_TRUE(parseDuration("500h").has_value());
}

TEST(Duration, FormatsTheShortestExactSpelling) {
  EXPECT_EQ(formatDuration(Millis(1500)), "1500ms");
  EXPECT_EQ(formatDuration(Millis(2000)), "2s");
  EXPECT_EQ(formatDuration(Millis(120000)), "2m");
  EXPECT_EQ(formatDuration(Millis(7200000)), "2h");
  EXPECT_EQ(formatDuration(Millis(0)), "0s");
  for (int64_t ms : {1, 999, 1000, 61000, 3600000, 5400000}) {
    EXPECT_EQ(parseDuration(formatDuration(Millis(ms))), Millis(ms));
  }
}

}  // namespace
}  // namespace tandem
