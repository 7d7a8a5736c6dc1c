// The `tandem` binary end to end: `tandem status` against fake_tandemd (the real IpcServer with
// a canned status) prints exactly the golden text, and without a daemon fails with exit 3.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.h"

namespace {

using nlohmann::json;
using namespace tandem::cli::testing;

class StatusCommandTest : public FakeTandemdTest {};

TEST_F(StatusCommandTest, PrintsTheGoldenSummaryOfWhatTandemdAnswered) {
  serve("three-nodes-lost-peer");
  Outcome o = run({TANDEM_PATH, "status", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, readFile(golden("three-nodes-lost-peer.txt")));
  EXPECT_EQ(o.err, "");
}

TEST_F(StatusCommandTest, JsonFlagPrintsTheAnswerAsTandemdSentIt) {
  serve("rejected-frames");
  Outcome o = run({TANDEM_PATH, "--json", "status", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  json sent = json::parse(readFile(golden("rejected-frames.json")));
  // The admin channel adds its own counters to the status the handler gives it.
  sent["admin_requests"] = {{"malformed", 0}, {"refused", 0}, {"changes", 0}};
  EXPECT_EQ(json::parse(o.out), sent);
  EXPECT_EQ(o.out, json::parse(o.out).dump(2) + "\n") << "pretty-printed";
}

TEST_F(StatusCommandTest, WithoutADaemonItSaysWhereItLookedAndExits3) {
  Outcome o = run({TANDEM_PATH, "status", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err, "tandem status: cannot reach tandemd (ipc name \"" + name_ +
                       "\"): is tandemd running in this network namespace?\n");
}

TEST_F(StatusCommandTest, WithoutADaemonJsonModePrintsTheErrorAsJson) {
  Outcome o = run({TANDEM_PATH, "--json", "status", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 3);
  json body = json::parse(o.out, nullptr, false);
  EXPECT_EQ(body["ok"], false) << o.out;
  EXPECT_EQ(body["code"], "unavailable");
}

TEST_F(StatusCommandTest, UnknownOptionIsAUsageError) {
  Outcome o = run({TANDEM_PATH, "status", "--ipc-nmae", name_});
  EXPECT_EQ(o.exit_code, 2);
}

}  // namespace
