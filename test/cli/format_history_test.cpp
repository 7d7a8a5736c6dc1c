// `tandem history --since`: what the argument means. The output itself is golden-tested against
// a whole director (test/director, golden/history).
#include "format_history.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace tandem::cli {
namespace {

class SinceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

TEST_F(SinceTest, ADurationCountsBackFromNow) {
  EXPECT_EQ(parseSince("30m", 10'000'000).value(), 10'000'000u - 1'800'000u);
  EXPECT_EQ(parseSince("1h30m", 1'764'770'000'000).value(), 1'764'770'000'000u - 5'400'000u);
  EXPECT_EQ(parseSince("2h", 1000).value(), 0u) << "before the epoch is everything";
}

TEST_F(SinceTest, ALocalTimeIsThatInstant) {
  EXPECT_EQ(parseSince("2026-12-03 14:05", 0).value(), 1'796'306'700'000u);
  EXPECT_EQ(parseSince("2026-12-03 14:05:30", 0).value(), 1'796'306'730'000u);
  EXPECT_EQ(parseSince("2026-12-03", 0).value(), 1'796'256'000'000u);
  EXPECT_EQ(formatWallClock(1'796'306'730'042), "2026-12-03 14:05:30.042");
}

TEST_F(SinceTest, AnythingElseSaysWhatItTakes) {
  for (const char* bad : {"yesterday", "14:05", "2026-12-03T14:05", "-5m", ""}) {
    auto r = parseSince(bad, 1000);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().message, std::string("--since \"") + bad +
                                     "\" is neither a duration back from now (30m, 2h) nor a "
                                     "local time (2026-12-03 14:05)");
  }
}

}  // namespace
}  // namespace tandem::cli
