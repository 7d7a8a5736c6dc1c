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

TEST(Text, ClosestMatchPrefersTheFirstOfEquals) {
  EXPECT_EQ(closestMatch("dead", {"dean", "deaf"}), "dean");
  EXPECT_EQ(closestMatch("dead", {"xdeadx", "deaf", "dead"}), "dead");
  // Exactly at the limit (two edits for a short word) still counts; one past it does not.
  EXPECT_EQ(closestMatch("ab", {"xyzw", "cd"}), "cd");
  EXPECT_FALSE(closestMatch("ab", {"cde"}));
  EXPECT_EQ(editDistance("abc", "xyz"), 3u);
}

TEST(Text, JoinsAlternatives) {
  EXPECT_EQ(joinAlternatives({"a"}, " or "), "a");
  EXPECT_EQ(joinAlternatives({"a", "b", "c"}, " or "), "a, b or c");
}

}  // namespace
}  // namespace tandem
