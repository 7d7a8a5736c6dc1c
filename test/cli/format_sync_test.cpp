// `tandem sync status` output, golden-tested: golden/sync/NAME.json is what tandemd answered,
// golden/sync/NAME.txt exactly what tandem prints. TANDEM_UPDATE_GOLDEN=1 rewrites the .txt
// files; review their diff.
#include "format_sync.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "commands.h"
#include "golden_file.h"
#include "ipc/protocol.h"

namespace tandem::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

fs::path golden(const std::string& file) { return fs::path(GOLDEN_DIR) / "sync" / file; }

void expectGolden(const std::string& name) {
  json answer = json::parse(cli::testing::readFile(golden(name + ".json")));
  CommandOutput output = renderSync(answer, /*json=*/false);
  EXPECT_EQ(output.exit_code, kExitOk);
  EXPECT_EQ(output.err, "");
  cli::testing::expectGoldenText(output.out, golden(name + ".txt"));
}

TEST(SyncGoldenTest, APairWithAFailbackWaitingForTheTable) { expectGolden("pair-waiting"); }
TEST(SyncGoldenTest, SyncDisabledSaysSo) { expectGolden("disabled"); }
TEST(SyncGoldenTest, ARefusedDaemonShowsTheKernelsWordsAndQuestionMarks) {
  expectGolden("refused");
}

TEST(SyncRenderTest, JsonIsTheAnswerAndAnUnreachableDaemonExitsThree) {
  json answer = json::parse(cli::testing::readFile(golden("disabled.json")));
  EXPECT_EQ(json::parse(renderSync(answer, true).out), answer);
  CommandOutput down = renderSync(Result<json>(fail(ErrorCode::kUnavailable, "no tandemd")), false);
  EXPECT_EQ(down.exit_code, kExitFailed);
  EXPECT_EQ(down.err, "tandem sync status: no tandemd\n");
  CommandOutput down_json =
      renderSync(Result<json>(fail(ErrorCode::kUnavailable, "no tandemd")), true);
  EXPECT_EQ(json::parse(down_json.out).value("ok", true), false);
}

}  // namespace
}  // namespace tandem::cli
