#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "golden_file.h"
#include "import_report.h"
#include "mapping.h"

namespace tandem::importer {
namespace {

TEST(ImportReport, CountsDistinctMappedLinesAndDroppedConstructs) {
  Report r;
  r.mapped("a.conf", 3, "lb_algo", "virtual_server.scheduler");
  r.differs("a.conf", 3, "x", "virtual_server.check.fall", "because");
  r.dropped("a.conf", 1, "digest", "virtual_server.check.expect_body", "no digest");
  r.note("do this");
  EXPECT_EQ(r.mappedLineCount(), 1u);
  EXPECT_EQ(r.droppedCount(), 1u);
  EXPECT_EQ(r.text(),
            "a.conf:1: dropped digest: no digest; nearest: virtual_server.check.expect_body\n"
            "a.conf:3 -> virtual_server.scheduler (lb_algo)\n"
            "a.conf:3 -> virtual_server.check.fall (x), differs: because\n"
            "note: do this\n"
            "1 lines mapped, 1 constructs dropped\n");
  EXPECT_EQ(r.json()["entries"][0]["fate"], "dropped");
  EXPECT_EQ(r.json()["mapped_lines"], 1);
}

// Every tandem key the mapping names is one conf/reference.md documents.
TEST(ImportMapping, EveryKeyItNamesIsDocumented) {
  std::string reference = cli::testing::readFile(REFERENCE_MD);
  for (auto table : {keepalivedMappings(), ldirectordMappings()}) {
    for (const auto& m : table) {
      std::string key(m.key);
      if (key.empty() || key.front() == '[' || key.front() == '(') continue;
      // a row of the reference's key tables, which start with the key (the generated table's
      // rows start with the source's keyword)
      EXPECT_NE(reference.find("\n| `" + key + "` |"), std::string::npos)
          << m.block << " " << m.keyword << " -> " << key << " is not in conf/reference.md";
    }
  }
}

// conf/reference.md's "Coming from keepalived or ldirectord" table is the mapping, generated:
// TANDEM_UPDATE_GOLDEN=1 rewrites it.
TEST(ImportMapping, ReferenceTableIsGeneratedFromTheMapping) {
  const std::string begin = "<!-- generated from the importer's mapping: do not edit -->\n";
  const std::string end = "<!-- end of the generated table -->\n";
  std::string reference = cli::testing::readFile(REFERENCE_MD);
  size_t b = reference.find(begin);
  size_t e = reference.find(end);
  ASSERT_NE(b, std::string::npos) << "conf/reference.md has no generated mapping table";
  ASSERT_NE(e, std::string::npos);
  std::string table = mappingTableMarkdown();
  std::string want = reference.substr(0, b + begin.size()) + table + reference.substr(e);
  cli::testing::expectGoldenText(want, REFERENCE_MD);
}

}  // namespace
}  // namespace tandem::importer
