// The exec checker with real children on the real loop: exit 0 is healthy, another exit is not
// and says what the command printed, the real server is in the environment, and a command that
// outlives its timeout fails and is killed with everything it started. A guard timer fails a
// probe that never ends.
#include "health/exec_checker.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "process/posix_child_runner.h"
#include "resources/health/real_loop_test.h"

namespace tandem::resources::health {
namespace {

using namespace std::chrono_literals;
using test::kLoadMargin;

class ExecCheckerTest : public test::RealLoopTest {
 protected:
  void SetUp() override {
    RealLoopTest::SetUp();
    runner_ = std::make_unique<process::PosixChildRunner>(*loop_);
  }
  void TearDown() override {
    runner_.reset();
    RealLoopTest::TearDown();
  }

  ProbeResult run(const std::string& shell_line, Millis timeout = 2000ms) {
    ProbeTarget t;
    t.address = *Endpoint::parse("127.0.0.1:8080", false);
    t.virtual_server = "web";
    t.check.type = config::CheckType::kExec;
    t.check.timeout = timeout;
    t.check.command = config::Command{{shell_line}, true};
    ExecChecker checker(*loop_, *runner_);
    return probeOnce(checker, t);
  }

  std::unique_ptr<process::PosixChildRunner> runner_;
};

TEST_F(ExecCheckerTest, ExitZeroIsHealthy) {
  ProbeResult r = run("exit 0");
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.reason, "exit 0");
}

TEST_F(ExecCheckerTest, AnotherExitFailsWithWhatTheCommandSaid) {
  ProbeResult r = run("echo 'backend says no'; exit 3");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "exit 3: backend says no");
}

TEST_F(ExecCheckerTest, TheRealServerIsInTheEnvironment) {
  ProbeResult r =
      run("test \"$TANDEM_VIRTUAL_SERVER\" = web && test \"$TANDEM_RS_ADDRESS\" = 127.0.0.1 && "
          "test \"$TANDEM_RS_PORT\" = 8080 && test \"$TANDEM_CHECK_TIMEOUT_MS\" = 2000");
  EXPECT_TRUE(r.ok) << r.reason;
}

TEST_F(ExecCheckerTest, AHungCheckTimesOutAndEverythingItStartedIsKilled) {
  char dir_template[] = "/tmp/tandem-exec-check-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string pidfile = std::string(dir_template) + "/pid";
  // A grandchild in the background, and the check itself hung on it.
  ProbeResult r = run("sleep 30 & echo $! > " + pidfile + "; wait", 300ms);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("timed out"), std::string::npos) << r.reason;
  EXPECT_GE(r.took, 300ms);
  // The group's kill and the shell's reaping come after the timeout: a wider margin.
  EXPECT_LT(r.took, 300ms + 5 * kLoadMargin) << "check.timeout (300 ms) and a margin for the kill";
  int pid = 0;
  std::ifstream(pidfile) >> pid;
  ASSERT_GT(pid, 0);
  // The process group was sent SIGKILL when the timeout passed; wait (bounded) for it to be gone.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = ::kill(pid, 0) != 0 && errno == ESRCH;
    if (!gone) ::usleep(10000);
  }
  EXPECT_TRUE(gone) << "the grandchild " << pid << " outlived the check";
  if (!gone) ::kill(pid, SIGKILL);
  ::unlink(pidfile.c_str());
  ::rmdir(dir_template);
}

TEST(ExecVerdict, WithExitWeightTheStatusSetsTheWeight) {
  auto exited = [](int code) {
    process::ChildResult r;
    r.exit_code = code;
    return r;
  };
  EXPECT_TRUE(execVerdict(exited(0), true).ok);
  EXPECT_EQ(execVerdict(exited(0), true).weight, std::nullopt) << "the configured weight";
  EXPECT_FALSE(execVerdict(exited(1), true).ok);
  EXPECT_TRUE(execVerdict(exited(2), true).ok);
  EXPECT_EQ(execVerdict(exited(2), true).weight, 0);
  EXPECT_EQ(execVerdict(exited(7), true).weight, 5);
  EXPECT_EQ(execVerdict(exited(255), true).weight, 253);
  EXPECT_FALSE(execVerdict(exited(7), false).ok) << "without exit_weight only 0 is healthy";
  process::ChildResult timed_out;
  timed_out.timed_out = true;
  EXPECT_FALSE(execVerdict(timed_out, true).ok);
  process::ChildResult killed;
  killed.term_signal = 9;
  EXPECT_FALSE(execVerdict(killed, true).ok);
}

TEST_F(ExecCheckerTest, AnExitWeightCheckReportsTheWeightItsStatusSays) {
  ProbeTarget t;
  t.address = *Endpoint::parse("127.0.0.1:8080", false);
  t.check.type = config::CheckType::kExec;
  t.check.timeout = 2000ms;
  t.check.exit_weight = true;
  t.check.command = config::Command{{"exit 7"}, true};
  ExecChecker checker(*loop_, *runner_);
  ProbeResult r = probeOnce(checker, t);
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.weight, 5);
  EXPECT_EQ(r.reason, "exit 7 (weight 5)");
}

}  // namespace
}  // namespace tandem::resources::health
