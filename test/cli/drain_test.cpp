// `tandem real drain|enable|list`, golden-tested without a daemon on simulated time:
// golden/drain/NAME.json holds the command and what a fake tandemd answers (for "drains", a list
// answered one after the other, the last one repeated); golden/drain/NAME.txt is the exit code,
// stdout, stderr and the requests sent with the simulated time of each. To accept a deliberate
// change, run with TANDEM_UPDATE_GOLDEN=1 and review the diff.
#include "drain.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "golden_file.h"

namespace tandem::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kDir = fs::path(GOLDEN_DIR) / "drain";

struct FakeDaemon {
  json answers;
  const int64_t* clock;
  std::vector<std::string> asked;
  size_t drains_asked = 0;

  Result<json> operator()(ipc::RequestId id, const json& body) {
    const std::string name(ipc::requestName(id));
    asked.push_back("at " + std::to_string(*clock) + " ms: " + name + " " + body.dump());
    if (id == ipc::RequestId::kDrain) {
      if (auto a = ipc::parseDrainArgs(body); !a) return ipc::errorBody(a.error());
    }
    auto it = answers.find(name);
    if (it == answers.end()) return fail(ErrorCode::kInternal, "no canned answer for " + name);
    json a = *it;
    if (a.is_array()) a = a.at(std::min(drains_asked++, a.size() - 1));
    if (auto f = a.find("fail"); f != a.end()) {
      return fail(ipc::errorCodeFromName(f->at("code").get<std::string>()),
                  f->at("message").get<std::string>());
    }
    return a;
  }
};

void expectGolden(const std::string& name) {
  json input = json::parse(cli::testing::readFile(kDir / (name + ".json")));
  const json& c = input["command"];
  int64_t clock = 0;
  FakeDaemon daemon{input["daemon"], &clock, {}};
  auto call_daemon = [&daemon](ipc::RequestId id, const json& body) { return daemon(id, body); };
  CommandOutput o;
  if (c["action"] == "list") {
    o = renderDrains(call_daemon(ipc::RequestId::kDrains, json::object()),
                     input["json"].get<bool>());
  } else {
    DrainCall call{c["action"] == "drain", c["service"].get<std::string>(),
                   c["server"].get<std::string>(), c.value("wait", false), std::nullopt};
    if (c.contains("timeout")) call.timeout = c["timeout"].get<std::string>();
    o = runDrain(
        call, call_daemon, [&clock] { return clock; }, [&clock](int64_t ms) { clock += ms; },
        input["json"].get<bool>());
  }
  std::string got = "exit: " + std::to_string(o.exit_code) + "\n--- stdout\n" + o.out +
                    "--- stderr\n" + o.err + "--- requests\n";
  for (const std::string& a : daemon.asked) got += a + "\n";
  cli::testing::expectGoldenText(got, kDir / (name + ".txt"));
}

TEST(DrainGoldenTest, DrainSaysWhatHappensEverywhere) { expectGolden("drain-ok"); }
TEST(DrainGoldenTest, DrainWithJsonPrintsTheAnswer) { expectGolden("drain-json"); }
TEST(DrainGoldenTest, DrainAlreadyDrainedChangesNothing) { expectGolden("drain-again"); }
TEST(DrainGoldenTest, DrainOfAnUnknownServerExits1) { expectGolden("drain-unknown-server"); }
TEST(DrainGoldenTest, WaitPollsTheActiveUntilNothingIsLeft) { expectGolden("drain-wait"); }
TEST(DrainGoldenTest, WaitWithJsonAddsTheWait) { expectGolden("drain-wait-json"); }
TEST(DrainGoldenTest, WaitPastTheTimeoutExits3AndSaysWhatIsLeft) {
  expectGolden("drain-wait-timeout");
}
TEST(DrainGoldenTest, WaitEndsWhenTheDrainIsEnabledMeanwhile) {
  expectGolden("drain-wait-enabled");
}
TEST(DrainGoldenTest, ATimeoutThatIsNoDurationIsRefusedBeforeAnyRequest) {
  expectGolden("drain-bad-timeout");
}
TEST(DrainGoldenTest, EnableGivesTheWeightBack) { expectGolden("enable-ok"); }
TEST(DrainGoldenTest, ListShowsTheDrainsAndWhatIsLeftPerNode) { expectGolden("list"); }
TEST(DrainGoldenTest, ListWithJson) { expectGolden("list-json"); }
TEST(DrainGoldenTest, ListWithNoDrain) { expectGolden("list-empty"); }

}  // namespace
}  // namespace tandem::cli
