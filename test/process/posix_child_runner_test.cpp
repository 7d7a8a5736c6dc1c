// The real runner on the real loop: real children, real signals.
#include "process/posix_child_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

#include "loop/qb_dispatcher.h"

namespace tandem::process {
namespace {

using namespace std::chrono_literals;

class ChildRunnerTest : public ::testing::Test {
 protected:
  ChildResult runToEnd(const CommandLine& cmd, Millis timeout,
                       const std::vector<std::string>& env = {}) {
    auto disp = loop::QbDispatcher::create();
    EXPECT_TRUE(disp) << disp.error().message;
    PosixChildRunner runner(**disp);
    ChildResult out;
    bool answered = false;
    // A guard against a runner that never answers: the test fails instead of hanging.
    auto guard = (*disp)->createTimer([&] { (*disp)->stop(); });
    guard->arm(timeout + 10s);
    auto h = runner.run(cmd, env, timeout, [&](ChildResult r) {
      out = std::move(r);
      answered = true;
      (*disp)->stop();
    });
    EXPECT_TRUE(h) << h.error().message;
    (*disp)->run();
    EXPECT_TRUE(answered) << "the runner never reported";
    return out;
  }
};

TEST_F(ChildRunnerTest, ReportsExitCodeAndOutput) {
  ChildResult r =
      runToEnd({{"/bin/sh", "-c", "echo fenced $PEER; exit 3"}, false}, 5s, {"PEER=lb2"});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "fenced lb2\n");
  EXPECT_EQ(r.describe(), "exit 3");
}

TEST_F(ChildRunnerTest, ShellLinesRunUnderTheShell) {
  ChildResult r = runToEnd({{"true && echo ok"}, true}, 5s);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.output, "ok\n");
}

TEST_F(ChildRunnerTest, ATimeoutKillsTheWholeProcessGroup) {
  // The grandchild would keep the output pipe open if it survived; the report arriving at all
  // (and promptly) shows the group died.
  ChildResult r = runToEnd({{"/bin/sh", "-c", "sleep 30 & sleep 30"}, false}, 200ms);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "timed out");
}

TEST_F(ChildRunnerTest, TheChildInheritsNoDescriptorButItsStdio) {
  int leaked = ::open("/dev/null", O_RDONLY);  // without O_CLOEXEC, as libcurl's sockets are
  ASSERT_GE(leaked, 3);
  ChildResult r = runToEnd({{"ls /proc/self/fd | sort -n | tr '\\n' ' '"}, true}, 5s);
  ::close(leaked);
  // 0-2, and 3 for the directory ls reads.
  EXPECT_EQ(r.output, "0 1 2 3 ") << "fd " << leaked << " must not reach the child";
}

TEST_F(ChildRunnerTest, AMissingProgramIsAnErrorThatNamesIt) {
  auto disp = loop::QbDispatcher::create();
  ASSERT_TRUE(disp) << disp.error().message;
  PosixChildRunner runner(**disp);
  auto h = runner.run({{"/nonexistent/fence"}, false}, {}, 5s, [](ChildResult) {});
  ASSERT_FALSE(h);
  EXPECT_NE(h.error().message.find("/nonexistent/fence"), std::string::npos) << h.error().message;
  EXPECT_NE(h.error().message.find("No such file"), std::string::npos) << h.error().message;
}

// Destroying the handle of a running child kills its process group at once and returns without
// waiting for it: the exit is reaped later, from the loop.
TEST_F(ChildRunnerTest, DestroyingAHandleKillsTheChildAndTheLoopReapsIt) {
  auto disp = loop::QbDispatcher::create();
  ASSERT_TRUE(disp) << disp.error().message;
  PosixChildRunner runner(**disp);
  bool called = false;
  auto h = runner.run({{"/bin/sh", "-c", "sleep 30 & sleep 30"}, false}, {}, 60s,
                      [&](ChildResult) { called = true; });
  ASSERT_TRUE(h) << h.error().message;
  h->reset();
  // The destructor never waits: it reaps at once only a child the SIGKILL already took (on a
  // loaded machine it can be gone by then), and leaves any other to the loop.
  EXPECT_LE(runner.reaping(), 1u);
  std::function<void()> check;
  auto tick = (*disp)->createTimer([&] { check(); });
  check = [&] {
    if (runner.reaping() == 0) {
      (*disp)->stop();
      return;
    }
    tick->arm(5ms);
  };
  auto guard = (*disp)->createTimer([&] { (*disp)->stop(); });
  guard->arm(10s);
  tick->arm(0ms);
  (*disp)->run();
  EXPECT_EQ(runner.reaping(), 0u) << "reaped from the loop";
  EXPECT_FALSE(called) << "a dropped handle reports nothing";
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD) << "no child left behind, not even a zombie";
}

}  // namespace
}  // namespace tandem::process
