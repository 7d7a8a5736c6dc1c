// `tandem status` output, golden-tested: golden/NAME.json is what tandemd answered,
// golden/NAME.txt exactly what tandem prints. To accept a deliberate change of the output,
// run with TANDEM_UPDATE_GOLDEN=1 and review the diff of golden/*.txt.
#include "format_status.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "commands.h"
#include "golden_file.h"

namespace tandem::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kGoldenDir = GOLDEN_DIR;

fs::path golden(const std::string& file) { return fs::path(kGoldenDir) / file; }

using cli::testing::expectGoldenText;
using cli::testing::readFile;

// The cases below, so that a golden file without a test (or the reverse) is noticed.
const std::set<std::string>& knownCases() {
  static const std::set<std::string> cases = {
      "two-nodes",         "three-nodes-lost-peer",     "no-active",
      "rejected-frames",   "move-standby-never-heard",  "partial-document",
      "vips-announced",    "failback-waiting",          "failback-override",
      "quorum-held",       "maintenance-move-lifetime", "standby-lifetime",
      "routes-held",       "routes-interface-error",    "routes-malformed",
      "routes-no-services"};
  return cases;
}

void expectGolden(const std::string& name) {
  ASSERT_TRUE(knownCases().count(name)) << name << " is missing from knownCases()";
  json answer = json::parse(readFile(golden(name + ".json")));
  CommandOutput output = renderStatus(answer, /*json=*/false);
  EXPECT_EQ(output.exit_code, kExitOk);
  EXPECT_EQ(output.err, "");
  const fs::path expected_path = golden(name + ".txt");
  expectGoldenText(output.out, expected_path);
}

TEST(StatusGoldenTest, TwoNodeClusterShowsTheActiveAndTheBackup) { expectGolden("two-nodes"); }

TEST(StatusGoldenTest, ThreeNodeClusterShowsALostPeerAndHowLongAgoItWasHeard) {
  expectGolden("three-nodes-lost-peer");
}

TEST(StatusGoldenTest, NoActiveNodeAndNoQuorumAreSpelledOut) { expectGolden("no-active"); }

TEST(StatusGoldenTest, HeldVipsAndTheNeighboursThatAnsweredTheirAnnouncementAreShown) {
  expectGolden("vips-announced");
}

TEST(StatusGoldenTest, NonzeroRejectedFramesAreListedByReason) { expectGolden("rejected-frames"); }

TEST(StatusGoldenTest, PendingMoveStandbyAndNeverHeardPeerAreShown) {
  expectGolden("move-standby-never-heard");
}

TEST(StatusGoldenTest, MaintenanceModeIsABannerAndAMoveSaysWhenItEnds) {
  expectGolden("maintenance-move-lifetime");
}

TEST(StatusGoldenTest, AStandbyWithALifetimeSaysWhenItEnds) { expectGolden("standby-lifetime"); }

TEST(StatusGoldenTest, AFailbackHeldBackForConnectionSyncSaysWhatItWaitsFor) {
  expectGolden("failback-waiting");
}

TEST(StatusGoldenTest, AFailbackPolicyFromTheUnitsEnvironmentSaysWhatTheConfigFileSays) {
  expectGolden("failback-override");
}

TEST(StatusGoldenTest, AQuorumVerdictHeldOverALostVotequorumSaysSince) {
  expectGolden("quorum-held");
}

TEST(StatusGoldenTest, MissingOrMistypedFieldsShowAsQuestionMarks) {
  expectGolden("partial-document");
}

TEST(StatusGoldenTest, EachRoutedServiceShowsItsRouteHeldOrNotWhyAndItsCounters) {
  expectGolden("routes-held");
}

TEST(StatusGoldenTest, AnUnusableRouteInterfaceIsShownWithTheRoutes) {
  expectGolden("routes-interface-error");
}

TEST(StatusGoldenTest, MistypedRouteFieldsShowAsQuestionMarksAndOtherEntriesAreSkipped) {
  expectGolden("routes-malformed");
}

TEST(StatusGoldenTest, BlackholeRoutesWithoutAListOfServicesShowOnlyHowTheyAreHeld) {
  expectGolden("routes-no-services");
}

// No virtual server has a route: tandemd says null (or nothing), and there is no section; a
// "routes" that is not an object is ignored the same way.
TEST(StatusRoutesTest, NoRoutesMeansNoRoutesSection) {
  json status = json::parse(readFile(golden("two-nodes.json")));
  const std::string without = formatStatus(status);
  for (const json& routes : {json(nullptr), json("routes"), json::array({1, 2}), json(3)}) {
    status["routes"] = routes;
    EXPECT_EQ(formatStatus(status), without) << routes.dump();
  }
  EXPECT_EQ(without.find("Routes"), std::string::npos);
}

TEST(StatusGoldenTest, EveryGoldenInputHasATest) {
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(fs::path(kGoldenDir))) {
    if (entry.path().extension() == ".json") found.insert(entry.path().stem().string());
  }
  EXPECT_EQ(found, knownCases());
}

TEST(StatusRenderTest, JsonOutputIsTheDaemonsAnswerPrettyPrinted) {
  json answer = json::parse(readFile(golden("three-nodes-lost-peer.json")));
  CommandOutput output = renderStatus(answer, /*json=*/true);
  EXPECT_EQ(output.out, answer.dump(2) + "\n");
  EXPECT_EQ(output.exit_code, kExitOk);
}

TEST(StatusRenderTest, UnreachableDaemonGoesToStderrWithExitCode3) {
  Result<json> answer = fail(ErrorCode::kUnavailable,
                             "cannot reach tandemd (ipc name \"tandem\"): is tandemd running in "
                             "this network namespace?");
  CommandOutput text = renderStatus(answer, false);
  EXPECT_EQ(text.out, "");
  EXPECT_EQ(text.err,
            "tandem status: cannot reach tandemd (ipc name \"tandem\"): is tandemd running in "
            "this network namespace?\n");
  EXPECT_EQ(text.exit_code, kExitFailed);

  CommandOutput as_json = renderStatus(answer, true);
  EXPECT_EQ(json::parse(as_json.out),
            (json{{"ok", false},
                  {"error",
                   "cannot reach tandemd (ipc name \"tandem\"): is tandemd running in "
                   "this network namespace?"},
                  {"code", "unavailable"}}));
  EXPECT_EQ(as_json.err, "");
  EXPECT_EQ(as_json.exit_code, kExitFailed);
}

// --json passes the routes through as tandemd sent them, every field and unknown one kept.
TEST(StatusRenderTest, JsonOutputCarriesTheRoutesAsTheDaemonSentThem) {
  json answer = json::parse(readFile(golden("routes-held.json")));
  answer["routes"]["services"][0]["future_field"] = {{"anything", 1}};
  CommandOutput output = renderStatus(answer, /*json=*/true);
  EXPECT_EQ(output.exit_code, kExitOk);
  EXPECT_EQ(json::parse(output.out)["routes"], answer["routes"]);
  EXPECT_EQ(output.out, answer.dump(2) + "\n");
}

TEST(StatusRenderTest, RefusalFromTheDaemonIsReportedWithItsExitCode) {
  json refused = {{"ok", false}, {"error", "status: not today"}, {"code", "permission-denied"}};
  CommandOutput text = renderStatus(refused, false);
  EXPECT_EQ(text.err, "tandem status: status: not today\n");
  EXPECT_EQ(text.exit_code, kExitFailed);
  CommandOutput as_json = renderStatus(refused, true);
  EXPECT_EQ(as_json.out, refused.dump(2) + "\n");
  EXPECT_EQ(as_json.exit_code, kExitFailed);
}

TEST(StatusRenderTest, BadRequestMapsToExitCode1AndEverythingElseTo3) {
  EXPECT_EQ(exitCodeFor(Error{ErrorCode::kInvalidArgument, ""}), kExitInvalid);
  EXPECT_EQ(exitCodeFor(Error{ErrorCode::kNotFound, ""}), kExitInvalid);
  EXPECT_EQ(exitCodeFor(Error{ErrorCode::kPermissionDenied, ""}), kExitFailed);
  EXPECT_EQ(exitCodeFor(Error{ErrorCode::kTimeout, ""}), kExitFailed);
  EXPECT_EQ(exitCodeFor(Error{ErrorCode::kParse, ""}), kExitFailed);
}

TEST(FormatAgeTest, PicksAUnitAnOperatorCanReadAtAGlance) {
  EXPECT_EQ(formatAge(-5), "0ms");
  EXPECT_EQ(formatAge(0), "0ms");
  EXPECT_EQ(formatAge(999), "999ms");
  EXPECT_EQ(formatAge(1000), "1.0s");
  EXPECT_EQ(formatAge(2460), "2.4s");
  EXPECT_EQ(formatAge(59999), "59.9s");
  EXPECT_EQ(formatAge(60000), "1m00s");
  EXPECT_EQ(formatAge(187340), "3m07s");
  EXPECT_EQ(formatAge(3725000), "1h02m");
  EXPECT_EQ(formatAge(90000000), "1d01h");
}

// --watch draws over the last frame: home, each line then erase-to-end-of-line, then erase
// below. Only the first frame clears the screen, so a refresh never shows a blank one.
TEST(StatusWatchTest, AFrameOverwritesInPlaceAndOnlyTheFirstClearsTheScreen) {
  EXPECT_EQ(watchFrame("a\nbb\n", false), "\x1b[Ha\x1b[K\nbb\x1b[K\n\x1b[J");
  EXPECT_EQ(watchFrame("a", true), "\x1b[H\x1b[2Ja\x1b[K\n\x1b[J");
  EXPECT_EQ(watchFrame("", false).find("\x1b[2J"), std::string::npos);
}

}  // namespace
}  // namespace tandem::cli
