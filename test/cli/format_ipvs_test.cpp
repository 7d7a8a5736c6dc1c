// `tandem ipvs show` output, golden-tested: golden/ipvs/NAME.json is what tandemd answered,
// golden/ipvs/NAME.txt exactly what tandem prints. TANDEM_UPDATE_GOLDEN=1 rewrites the .txt
// files; review their diff.
#include "format_ipvs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "commands.h"
#include "golden_file.h"
#include "ipc/protocol.h"

namespace tandem::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

fs::path golden(const std::string& file) { return fs::path(GOLDEN_DIR) / "ipvs" / file; }

using cli::testing::expectGoldenText;
using cli::testing::readFile;

void expectGolden(const std::string& name) {
  json answer = json::parse(readFile(golden(name + ".json")));
  CommandOutput output = renderIpvs(answer, /*json=*/false);
  EXPECT_EQ(output.exit_code, kExitOk);
  EXPECT_EQ(output.err, "");
  const fs::path expected_path = golden(name + ".txt");
  expectGoldenText(output.out, expected_path);
}

TEST(IpvsGoldenTest, NatAndDrServicesShowWeightsHealthConnectionsAndRates) {
  expectGolden("nat-and-dr");
}

TEST(IpvsGoldenTest, AnEmptyTableSaysSo) { expectGolden("empty"); }

TEST(IpvsGoldenTest, OutOfSyncIpv6FwmarkAndPartialEntries) { expectGolden("not-in-sync"); }

TEST(IpvsFormatTest, RatesKeepThreeSignificantDigits) {
  EXPECT_EQ(formatRate(0), "0");
  EXPECT_EQ(formatRate(9999), "9999");
  EXPECT_EQ(formatRate(10000), "10.0k");
  EXPECT_EQ(formatRate(12345), "12.3k");
  EXPECT_EQ(formatRate(123456), "123k");
  EXPECT_EQ(formatRate(999999), "999k");
  EXPECT_EQ(formatRate(1234567), "1.23M");
  EXPECT_EQ(formatRate(61234567), "61.2M");
  EXPECT_EQ(formatRate(1234567890), "1.23G");
}

TEST(IpvsFormatTest, ATandemdWithoutIpvsExits3WithItsMessage) {
  json answer = ipc::errorBody(
      Error{ErrorCode::kUnavailable, "IPVS is not available on this director: no module"});
  CommandOutput text = renderIpvs(answer, false);
  EXPECT_EQ(text.exit_code, kExitFailed);
  EXPECT_EQ(text.out, "");
  EXPECT_EQ(text.err, "tandem ipvs show: IPVS is not available on this director: no module\n");
  CommandOutput js = renderIpvs(answer, true);
  EXPECT_EQ(js.exit_code, kExitFailed);
  EXPECT_EQ(json::parse(js.out), answer);
}

TEST(IpvsFormatTest, NoAnswerIsAFailureToo) {
  CommandOutput o = renderIpvs(fail(ErrorCode::kTimeout, "tandemd did not answer"), false);
  EXPECT_EQ(o.exit_code, kExitFailed);
  EXPECT_EQ(o.err, "tandem ipvs show: tandemd did not answer\n");
}

TEST(IpvsFormatTest, AnAnswerWithoutServicesIsShownAsUnknownNotAsEmpty) {
  EXPECT_EQ(formatIpvs(json{{"ok", true}}),
            "IPVS table: ? (tandemd's answer has no service list)\n");
}

}  // namespace
}  // namespace tandem::cli
