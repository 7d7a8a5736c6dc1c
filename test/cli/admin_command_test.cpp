// The `tandem` binary end to end for the commands that change the cluster: `tandem resource
// move|clear` and `tandem node standby|online` against fake_tandemd (the real IpcServer,
// answering as tandemd does and recording what reached it). The output matches the golden
// transcripts of admin_test.cpp; a misspelt node never reaches the daemon.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_harness.h"

namespace {

using nlohmann::json;
using namespace tandem::cli::testing;

// The stdout or stderr section of golden/admin/NAME.txt.
std::string section(const std::string& name, const std::string& which) {
  std::string text = readFile(golden("admin/" + name + ".txt"));
  std::string head = "--- " + which + "\n";
  size_t from = text.find(head);
  if (from == std::string::npos) return "<no " + which + " in " + name + ".txt>";
  from += head.size();
  size_t to = text.find("--- ", from);
  return text.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

class AdminCommandTest : public FakeTandemdTest {
 protected:
  void SetUp() override {
    FakeTandemdTest::SetUp();
    log_ = ::testing::TempDir() + name_ + ".requests";
    std::remove(log_.c_str());
  }
  void TearDown() override {
    FakeTandemdTest::TearDown();
    std::remove(log_.c_str());
  }
  // What reached the daemon, one change request per line.
  std::string requests() const { return readFile(log_); }

  std::string log_;
};

TEST_F(AdminCommandTest, ResourceMovePrintsTheGoldenSentenceAndReachesTheDaemon) {
  serve("two-nodes", log_);
  Outcome o = run({TANDEM_PATH, "resource", "move", "lb2", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, section("move-ok", "stdout"));
  EXPECT_EQ(o.err, "");
  EXPECT_EQ(requests(), "move target=lb2\n");
}

TEST_F(AdminCommandTest, ResourceMoveToAnUnknownNodeExits1AndNothingReachesTheDaemon) {
  serve("two-nodes", log_);
  Outcome o = run({TANDEM_PATH, "resource", "move", "lb9", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err, section("move-unknown-node", "stderr"));
  EXPECT_EQ(requests(), "");
}

TEST_F(AdminCommandTest, JsonAfterTheSubcommandPrintsTheDaemonsAnswer) {
  serve("two-nodes", log_);
  Outcome o = run({TANDEM_PATH, "resource", "move", "lb2", "--json", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(json::parse(o.out), (json{{"ok", true}, {"target", "lb2"}}));
  EXPECT_EQ(o.out, section("move-json", "stdout"));
}

TEST_F(AdminCommandTest, ResourceClear) {
  serve("two-nodes", log_);
  Outcome o = run({TANDEM_PATH, "resource", "clear", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, section("clear-ok", "stdout"));
  EXPECT_EQ(requests(), "clear\n");
}

TEST_F(AdminCommandTest, NodeStandbyWithoutANodeIsThisNode) {
  serve("two-nodes", log_);
  Outcome o = run({TANDEM_PATH, "node", "standby", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, section("standby-self", "stdout"));
  EXPECT_EQ(requests(), "standby node=lb1 on=true\n");
}

TEST_F(AdminCommandTest, NodeStandbyOfAnotherNodeIsRefusedWithExit1) {
  serve("two-nodes", log_);
  Outcome o = run({TANDEM_PATH, "node", "standby", "lb2", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.err, section("standby-other-node", "stderr"));
}

TEST_F(AdminCommandTest, NodeOnlineWithJson) {
  serve("two-nodes", log_);
  Outcome o = run({TANDEM_PATH, "--json", "node", "online", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, section("online-json", "stdout"));
  EXPECT_EQ(requests(), "standby node=lb1 on=false\n");
}

TEST_F(AdminCommandTest, WithoutADaemonItExits3) {
  Outcome o = run({TANDEM_PATH, "resource", "move", "lb2", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(o.err, "tandem resource move: cannot reach tandemd (ipc name \"" + name_ +
                       "\"): is tandemd running in this network namespace?\n");
}

TEST_F(AdminCommandTest, MissingOrUnknownArgumentsAreUsageErrors) {
  EXPECT_EQ(run({TANDEM_PATH, "resource", "move", "--ipc-name", name_}).exit_code, 2);
  EXPECT_EQ(run({TANDEM_PATH, "resource"}).exit_code, 2);
  EXPECT_EQ(run({TANDEM_PATH, "node"}).exit_code, 2);
  EXPECT_EQ(run({TANDEM_PATH, "resource", "clear", "lb1"}).exit_code, 2);
  EXPECT_EQ(run({TANDEM_PATH, "node", "standby", "lb1", "lb2"}).exit_code, 2);
}

}  // namespace
