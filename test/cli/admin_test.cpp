// `tandem resource move|clear`, `tandem node standby|online` and `tandem maintenance on|off`,
// golden-tested without a daemon:
// golden/admin/NAME.json holds the command and what a fake tandemd answers to each request;
// golden/admin/NAME.txt is the exit code, stdout, stderr and the requests sent, in order. To
// accept a deliberate change, run with TANDEM_UPDATE_GOLDEN=1 and review the diff.
#include "admin.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "golden_file.h"

namespace tandem::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kAdminDir = fs::path(GOLDEN_DIR) / "admin";

using cli::testing::expectGoldenText;
using cli::testing::readFile;

const std::set<std::string>& knownCases() {
  static const std::set<std::string> cases = {"move-ok",
                                              "move-json",
                                              "move-unknown-node",
                                              "move-unknown-node-json",
                                              "move-refused",
                                              "move-unreachable",
                                              "clear-ok",
                                              "standby-self",
                                              "standby-other-node",
                                              "online-named",
                                              "online-json",
                                              "standby-no-cluster",
                                              "move-lifetime",
                                              "move-lifetime-not-a-duration",
                                              "standby-lifetime-json",
                                              "standby-lifetime-too-short",
                                              "maintenance-on",
                                              "maintenance-off-json",
                                              "maintenance-refused"};
  return cases;
}

AdminAction actionOf(const std::string& name) {
  if (name == "move") return AdminAction::kMove;
  if (name == "clear") return AdminAction::kClear;
  if (name == "standby") return AdminAction::kStandby;
  if (name == "maintenance-on") return AdminAction::kMaintenanceOn;
  if (name == "maintenance-off") return AdminAction::kMaintenanceOff;
  return AdminAction::kOnline;
}

// Serves the canned answers by request name and records what was asked.
struct FakeDaemon {
  json answers;
  std::vector<std::string> asked;

  Result<json> operator()(ipc::RequestId id, const json& body) {
    const std::string name(ipc::requestName(id));
    asked.push_back(name + " " + body.dump());
    // What tandemd's admin service would refuse before its handler sees it.
    Result<void> valid;
    if (id == ipc::RequestId::kStandby) {
      if (auto a = ipc::parseStandbyArgs(body); !a) valid = fail(a.error());
    } else if (id == ipc::RequestId::kMove) {
      if (auto a = ipc::parseMoveArgs(body); !a) valid = fail(a.error());
    } else if (id == ipc::RequestId::kMaintenance) {
      if (auto a = ipc::parseMaintenanceArgs(body); !a) valid = fail(a.error());
    } else {
      valid = ipc::parseNoArgs(id, body);
    }
    if (!valid) return ipc::errorBody(valid.error());
    auto it = answers.find(name);
    if (it == answers.end()) return fail(ErrorCode::kInternal, "no canned answer for " + name);
    if (auto f = it->find("fail"); f != it->end()) {
      return fail(ipc::errorCodeFromName(f->at("code").get<std::string>()),
                  f->at("message").get<std::string>());
    }
    return *it;
  }
};

std::string transcript(const CommandOutput& o, const std::vector<std::string>& asked) {
  std::string out = "exit: " + std::to_string(o.exit_code) + "\n--- stdout\n" + o.out +
                    "--- stderr\n" + o.err + "--- requests\n";
  for (const std::string& a : asked) out += a + "\n";
  return out;
}

void expectGolden(const std::string& name) {
  ASSERT_TRUE(knownCases().count(name)) << name << " is missing from knownCases()";
  json input = json::parse(readFile(kAdminDir / (name + ".json")));
  AdminCall call{actionOf(input["command"]["action"].get<std::string>()), std::nullopt,
                 std::nullopt};
  if (input["command"].contains("node")) call.node = input["command"]["node"].get<std::string>();
  if (input["command"].contains("lifetime")) {
    call.lifetime = input["command"]["lifetime"].get<std::string>();
  }
  FakeDaemon daemon{input["daemon"], {}};
  auto answer =
      runAdmin(call, [&daemon](ipc::RequestId id, const json& body) { return daemon(id, body); });
  std::string got = transcript(renderAdmin(call, answer, input["json"].get<bool>()), daemon.asked);
  const fs::path expected = kAdminDir / (name + ".txt");
  expectGoldenText(got, expected);
}

TEST(AdminGoldenTest, MoveToAKnownNodeAsksStatusThenMoves) { expectGolden("move-ok"); }
TEST(AdminGoldenTest, MoveWithJsonPrintsTheDaemonsAnswer) { expectGolden("move-json"); }
TEST(AdminGoldenTest, MoveToAnUnknownNodeNamesTheRealOnesAndSendsNoMove) {
  expectGolden("move-unknown-node");
}
TEST(AdminGoldenTest, MoveToAnUnknownNodeWithJsonIsAJsonErrorWithExit1) {
  expectGolden("move-unknown-node-json");
}
TEST(AdminGoldenTest, MoveRefusedByTheDaemonExits3) { expectGolden("move-refused"); }
TEST(AdminGoldenTest, MoveWithoutADaemonExits3AndSendsNothingElse) {
  expectGolden("move-unreachable");
}
TEST(AdminGoldenTest, ClearSendsOneRequest) { expectGolden("clear-ok"); }
TEST(AdminGoldenTest, StandbyWithoutANodeNamesTheNodeThatAnswers) { expectGolden("standby-self"); }
TEST(AdminGoldenTest, StandbyOfAnotherNodeIsRefusedByTheDaemonWithExit1) {
  expectGolden("standby-other-node");
}
TEST(AdminGoldenTest, StandbyWithoutANodeOnADaemonWithoutAClusterAsksForTheName) {
  expectGolden("standby-no-cluster");
}
TEST(AdminGoldenTest, OnlineOfANamedNodeChecksTheName) { expectGolden("online-named"); }
TEST(AdminGoldenTest, OnlineWithJsonPrintsTheDaemonsAnswer) { expectGolden("online-json"); }
TEST(AdminGoldenTest, MoveWithALifetimeSendsItInMsAndSaysWhenItEnds) {
  expectGolden("move-lifetime");
}
TEST(AdminGoldenTest, ALifetimeThatIsNoDurationIsRefusedBeforeAnyRequest) {
  expectGolden("move-lifetime-not-a-duration");
}
TEST(AdminGoldenTest, StandbyWithALifetimeAndJson) { expectGolden("standby-lifetime-json"); }
TEST(AdminGoldenTest, ALifetimeUnderASecondIsRefusedBeforeAnyRequest) {
  expectGolden("standby-lifetime-too-short");
}
TEST(AdminGoldenTest, MaintenanceOnSaysWhatItMeans) { expectGolden("maintenance-on"); }
TEST(AdminGoldenTest, MaintenanceOffWithJson) { expectGolden("maintenance-off-json"); }
TEST(AdminGoldenTest, MaintenanceRefusedToAnotherUserExits3) {
  expectGolden("maintenance-refused");
}

TEST(AdminGoldenTest, EveryGoldenInputHasATest) {
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(kAdminDir)) {
    if (entry.path().extension() == ".json") found.insert(entry.path().stem().string());
  }
  EXPECT_EQ(found, knownCases());
}

TEST(AdminCheckNodeTest, AStatusWithoutNodesLetsTandemdJudge) {
  EXPECT_TRUE(checkNode(json::object(), "lb9"));
  EXPECT_TRUE(checkNode(json{{"nodes", json::array()}}, "lb9"));
}

TEST(AdminCheckNodeTest, UnknownNodeIsAnInvalidArgumentListingTheNodes) {
  json status = {{"nodes", {{{"name", "a"}}, {{"name", "b"}}, {{"name", "c"}}}}};
  EXPECT_TRUE(checkNode(status, "b"));
  auto r = checkNode(status, "d");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, "unknown node \"d\"; the cluster's nodes are a, b, c");
}

TEST(AdminRunTest, AnEmptyNodeNameIsRefusedBeforeAnyRequest) {
  int calls = 0;
  auto daemon = [&calls](ipc::RequestId, const json&) -> Result<json> {
    ++calls;
    return json{{"ok", true}};
  };
  for (AdminAction a : {AdminAction::kMove, AdminAction::kStandby, AdminAction::kOnline}) {
    auto r = runAdmin(AdminCall{a, std::string(), std::nullopt}, daemon);
    ASSERT_FALSE(r) << commandName(a);
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace tandem::cli
