// The `tandem` binary end to end: `tandem status` against fake_tandemd (the real IpcServer with
// a canned status) prints exactly the golden text, without a daemon fails with exit 3, and
// refuses to talk to a listener that is not root.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
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

// Another user listens on the abstract name first (a squatter): tandem must not send it a
// request, and must name it. Needs root to be that other user; CI runs as root.
TEST_F(StatusCommandTest, RefusesAServerThatIsNotRootAndNamesIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to listen as another user (nobody)";
  int ready[2];
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  pid_t squatter = ::fork();
  if (squatter == 0) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    // Abstract (a leading NUL), and padded with NULs to the whole sun_path as libqb binds it:
    // the very address tandemd would publish.
    std::memcpy(addr.sun_path + 1, name_.data(), name_.size());
    auto len = static_cast<socklen_t>(sizeof addr);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 8) != 0) {
      ::_exit(1);
    }
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1) << "the squatter did not listen";
  ::close(ready[0]);
  Outcome o = run({TANDEM_PATH, "status", "--ipc-name", name_});
  Outcome j = run({TANDEM_PATH, "--json", "status", "--ipc-name", name_});
  ::kill(squatter, SIGKILL);
  ::waitpid(squatter, nullptr, 0);
  EXPECT_EQ(o.exit_code, 3) << o.err;  // failed, as with no daemon
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err, "tandem status: the admin socket (ipc name \"" + name_ + "\") is held by pid " +
                       std::to_string(squatter) +
                       ", uid 65534, not by root: that is not tandemd, so tandem sends it nothing; "
                       "find it with `ss -xlp | grep @" +
                       name_ + "`, stop it, and restart tandemd\n");
  json body = json::parse(j.out, nullptr, false);
  EXPECT_EQ(body["code"], "permission-denied") << j.out;
}

TEST_F(StatusCommandTest, UnknownOptionIsAUsageError) {
  Outcome o = run({TANDEM_PATH, "status", "--ipc-nmae", name_});
  EXPECT_EQ(o.exit_code, 2);
}

}  // namespace
