// The `tandem` binary end to end: `tandem ipvs show` against fake_tandemd (the real IpcServer
// with a canned ipvs answer) prints the golden text and the JSON as sent; a tandemd without
// IPVS, or none at all, exits 3 with a message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.h"

namespace {

using nlohmann::json;
using namespace tandem::cli::testing;

class IpvsCommandTest : public FakeTandemdTest {};

TEST_F(IpvsCommandTest, PrintsTheGoldenTableOfWhatTandemdAnswered) {
  serve("ipvs/served-status");
  Outcome o = run({TANDEM_PATH, "ipvs", "show", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, readFile(golden("ipvs/nat-and-dr.txt")));
  EXPECT_EQ(o.err, "");
}

TEST_F(IpvsCommandTest, JsonFlagPrintsTheAnswerAsTandemdSentIt) {
  serve("ipvs/served-status");
  Outcome o = run({TANDEM_PATH, "ipvs", "show", "--json", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(json::parse(o.out), json::parse(readFile(golden("ipvs/nat-and-dr.json"))));
}

TEST_F(IpvsCommandTest, ATandemdWithoutIpvsSaysWhyAndExits3) {
  serve("two-nodes");
  Outcome o = run({TANDEM_PATH, "ipvs", "show", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err,
            "tandem ipvs show: tandemd manages no IPVS services: the config has no "
            "[[virtual_server]]\n");
}

TEST_F(IpvsCommandTest, WithoutADaemonItExits3) {
  Outcome o = run({TANDEM_PATH, "ipvs", "show", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_NE(o.err.find("cannot reach tandemd"), std::string::npos) << o.err;
}

TEST_F(IpvsCommandTest, IpvsAloneIsAUsageError) {
  Outcome o = run({TANDEM_PATH, "ipvs", "--ipc-name", name_});
  EXPECT_EQ(o.exit_code, 2);
}

}  // namespace
