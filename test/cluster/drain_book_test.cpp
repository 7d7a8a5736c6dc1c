#include "cluster/drain_book.h"

#include <gtest/gtest.h>

namespace tandem::cluster {
namespace {

DrainTarget target(const std::string& line) { return *DrainTarget::parse(line); }

TEST(DrainBook, AChangeTakesANewerGenerationAndARepeatChangesNothing) {
  DrainBook book;
  const DrainTarget t = target("tcp 198.51.100.50:80 203.0.113.10:80");
  EXPECT_EQ(book.set(t, true, 100).value(), true);
  EXPECT_EQ(book.generation(), 100u);
  EXPECT_TRUE(book.drained(t));
  EXPECT_EQ(book.set(t, true, 200).value(), false);
  EXPECT_EQ(book.generation(), 100u);
  // A clock behind the last generation still moves it forward.
  EXPECT_EQ(book.set(t, false, 50).value(), true);
  EXPECT_EQ(book.generation(), 101u);
  EXPECT_FALSE(book.drained(t));
}

TEST(DrainBook, TheSeventeenthDrainIsRefusedAndNothingChanges) {
  DrainBook book;
  for (int i = 1; i <= 16; ++i) {
    ASSERT_TRUE(book.set(target("tcp 198.51.100.50:80 203.0.113." + std::to_string(i) + ":80"),
                         true, static_cast<uint64_t>(i)));
  }
  auto r = book.set(target("tcp 198.51.100.50:80 203.0.113.99:80"), true, 99);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "at most 16 real servers can be drained at once (the set rides in every heartbeat); "
            "enable one first");
  EXPECT_EQ(book.targets().size(), 16u);
  EXPECT_EQ(book.generation(), 16u);
}

TEST(DrainBook, APeersNewerSetIsAdoptedAnOlderOneIgnoredAndATieGoesToTheGreater) {
  DrainBook book;
  const DrainTarget a = target("tcp 198.51.100.50:80 203.0.113.10:80");
  const DrainTarget b = target("udp 198.51.100.50:53 203.0.113.11:53");
  ASSERT_TRUE(book.set(a, true, 10));
  EXPECT_FALSE(book.adopt(9, {b}));
  EXPECT_TRUE(book.adopt(11, {b, b}));
  EXPECT_EQ(book.targets(), std::vector<DrainTarget>{b});
  // Same generation, other contents: both sides settle on the greater set.
  DrainBook other;
  ASSERT_TRUE(other.set(a, true, 11));
  const bool a_wins = std::vector<DrainTarget>{a} > std::vector<DrainTarget>{b};
  EXPECT_EQ(book.adopt(11, {a}), a_wins);
  EXPECT_EQ(other.adopt(11, {b}), !a_wins);
  EXPECT_EQ(book.targets(), other.targets());
}

TEST(DrainBook, TheStateFileRoundTripsAndABadLineIsNamed) {
  DrainBook book;
  ASSERT_TRUE(book.set(target("fwmark 7 (IPv6) [2001:db8::10]:0"), true, 1764792000123));
  ASSERT_TRUE(book.set(target("sctp [2001:db8::50]:80 [2001:db8::11]:80"), true, 1764792000124));
  auto back = DrainBook::parse(book.serialize());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->generation(), book.generation());
  EXPECT_EQ(back->targets(), book.targets());
  EXPECT_EQ(DrainBook::parse("generation 5\ntcp 198.51.100.50:80 nonsense\n").error().message,
            "line 2: not a drain (\"tcp ADDR:PORT ADDR:PORT\" or \"fwmark N (IPv4|IPv6) "
            "ADDR:PORT\"): \"tcp 198.51.100.50:80 nonsense\"");
  EXPECT_FALSE(DrainBook::parse("generation -1\n"));
  EXPECT_FALSE(DrainBook::parse("generation 99999999999999999\n"));  // past the year 9999
  EXPECT_FALSE(DrainBook::parse("tcp 198.51.100.50:80 203.0.113.10:80\n"));
  EXPECT_TRUE(DrainBook::parse("").value().targets().empty());
}

}  // namespace
}  // namespace tandem::cluster
