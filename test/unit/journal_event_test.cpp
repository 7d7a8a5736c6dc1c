#include "common/journal_event.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace tandem {
namespace {

constexpr JournalKind kKinds[] = {JournalKind::kStart, JournalKind::kRole, JournalKind::kTakeover,
                                  JournalKind::kRealServer, JournalKind::kAdmin};

// The catalog shipped for journalctl -x explains every message ID tandemd sends, and nothing
// else: an ID changed in the code without the catalog, or the other way, fails here.
TEST(JournalEvent, TheCatalogHasAnEntryForEveryMessageIdAndNoOther) {
  std::ifstream in(std::string(TANDEM_SOURCE_DIR) + "/packaging/systemd/tandem.catalog");
  ASSERT_TRUE(in) << "packaging/systemd/tandem.catalog";
  std::stringstream text;
  text << in.rdbuf();
  const std::string catalog = text.str();
  std::set<std::string> in_catalog;
  const std::regex header("^-- ([0-9a-f]{32})$", std::regex::multiline);
  for (auto it = std::sregex_iterator(catalog.begin(), catalog.end(), header);
       it != std::sregex_iterator(); ++it) {
    in_catalog.insert((*it)[1]);
  }
  std::set<std::string> in_code;
  for (JournalKind k : kKinds) in_code.insert(std::string(journalMessageId(k)));
  EXPECT_EQ(in_code.size(), std::size(kKinds)) << "two kinds share a message ID";
  EXPECT_EQ(in_catalog, in_code);
}

TEST(JournalEvent, KindNamesAreWhatTandemEventMatches) {
  EXPECT_EQ(journalKindName(JournalKind::kTakeover), "takeover");
  EXPECT_EQ(journalKindName(JournalKind::kRealServer), "real-server");
  EXPECT_EQ(journalKindName(JournalKind::kRole), "role");
  EXPECT_EQ(journalKindName(JournalKind::kAdmin), "admin");
  EXPECT_EQ(journalKindName(JournalKind::kStart), "start");
}

}  // namespace
}  // namespace tandem
