#include "common/text.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(Text, EditDistanceCountsEdits) {
  EXPECT_EQ(editDistance("", ""), 0u);
  EXPECT_EQ(editDistance("abc", ""), 3u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(editDistance("interval", "intervall"), 1u);
}

TEST(Text, SuggestsOnlyCloseMatches) {
  std::vector<std::string> keys = {"heartbeat_interval", "dead_time", "failback"};
  EXPECT_EQ(closestMatch("heartbeat_intervall", keys), "heartbeat_interval");
  EXPECT_EQ(closestMatch("deadtime", keys), "dead_time");
  EXPECT_FALSE(closestMatch("priority", keys));
}

TEST(Text, JoinsAlternatives) {
  EXPECT_EQ(joinAlternatives({"a"}, " or "), "a");
  EXPECT_EQ(joinAlternatives({"a", "b", "c"}, " or "), "a, b or c");
}

}  // namespace
}  // namespace tandem
