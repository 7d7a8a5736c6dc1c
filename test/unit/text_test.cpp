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

TEST(Text, QuoteEscapesWhatATerminalWouldActOn) {
  EXPECT_EQ(quote(""), "\"\"");
  EXPECT_EQ(quote("eth0"), "\"eth0\"");
  EXPECT_EQ(quote("say \"hi\" \\ bye"), "\"say \\\"hi\\\" \\\\ bye\"");
  EXPECT_EQ(quote("a\r\n\tb"), "\"a\\r\\n\\tb\"");
  EXPECT_EQ(quote(std::string("\x1b[2J\0\x7f\xff", 7)), "\"\\x1b[2J\\x00\\x7f\\xff\"");
}

TEST(Text, QuoteCutsPastMaxAndSaysSo) {
  EXPECT_EQ(quote("220 mail ready", 3), "\"220\"...");
  EXPECT_EQ(quote("220", 3), "\"220\"");
  EXPECT_EQ(quote("220", 0), "\"\"...");
}

TEST(Text, QuoteForTomlKeepsUtf8AndWritesControlBytesAsUnicodeEscapes) {
  EXPECT_EQ(quote("caf\xc3\xa9 \"x\"\n", std::string_view::npos, Quoting::kToml),
            "\"caf\xc3\xa9 \\\"x\\\"\\n\"");
  EXPECT_EQ(quote(std::string("\x01\x7f\0", 3), std::string_view::npos, Quoting::kToml),
            "\"\\u0001\\u007f\\u0000\"");
  // The same bytes for a message: every one escaped.
  EXPECT_EQ(quote("caf\xc3\xa9"), "\"caf\\xc3\\xa9\"");
}

}  // namespace
}  // namespace tandem
