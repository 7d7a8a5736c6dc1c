// The commands run on events, on simulated time: one at a time per subject, in order, a bounded
// queue that drops its oldest waiting event, and failures that are logged and change nothing.
#include "core/event_commands.h"

#include <gtest/gtest.h>

#include "fakes/fake_logger.h"
#include "fakes/sim_dispatcher.h"
#include "resources/fake_children.h"

namespace tandem::resources {
namespace {

using namespace std::chrono_literals;

class EventCommandsTest : public ::testing::Test {
 protected:
  std::unique_ptr<EventCommands> make(size_t max_waiting) {
    return std::make_unique<EventCommands>(
        &children_, [this](LogLevel l, const std::string& s) { logger_.log(l, s); },
        EventCommandsOptions{max_waiting, "notify.role"});
  }
  static EventCommand cmd(const std::string& n, Millis timeout = 10s) {
    return EventCommand{
        config::Command{{"/usr/local/sbin/hook", n}, false}, timeout, {"TANDEM_N=" + n}, "n=" + n};
  }
  std::vector<std::string> started() const {
    std::vector<std::string> out;
    for (const auto& s : children_.starts) out.push_back(fakes::SimChildren::env(s, "TANDEM_N"));
    return out;
  }

  fakes::SimDispatcher sim_;
  fakes::SimChildren children_{sim_};
  fakes::FakeLogger logger_;
};

TEST_F(EventCommandsTest, AQueueRunsEveryEventInOrderEachAfterThePreviousEnded) {
  children_.runs_for = 1s;
  auto q = make(64);
  for (int i = 1; i <= 5; ++i) q->run("director", cmd(std::to_string(i)));
  EXPECT_EQ(q->running(), 1u);
  EXPECT_EQ(q->waiting(), 4u);
  sim_.advance(10s);
  EXPECT_EQ(started(), (std::vector<std::string>{"1", "2", "3", "4", "5"}));
  EXPECT_EQ(children_.most_running, 1u);
  for (size_t i = 1; i < children_.starts.size(); ++i) {
    EXPECT_EQ(children_.starts[i].at - children_.starts[i - 1].at, 1s) << "when the previous ended";
  }
  EXPECT_EQ(q->running(), 0u);
  EXPECT_EQ(q->dropped(), 0u);
}

TEST_F(EventCommandsTest, AFullQueueDropsItsOldestWaitingEventAndSaysSo) {
  children_.runs_for = 1h;  // hangs, until the timeout
  auto q = make(3);
  for (int i = 1; i <= 6; ++i) q->run("director", cmd(std::to_string(i), 2s));
  EXPECT_EQ(q->waiting(), 3u) << "bounded, whatever the hook does";
  EXPECT_EQ(q->dropped(), 2u);
  EXPECT_EQ(logger_.count(LogLevel::kWarning,
                          "notify command dropped, 3 newer events wait behind a command still "
                          "running n=2"),
            1u);
  EXPECT_EQ(logger_.count(LogLevel::kWarning,
                          "notify command dropped, 3 newer events wait "
                          "behind a command still running n=3"),
            1u);
  sim_.advance(20s);
  EXPECT_EQ(started(), (std::vector<std::string>{"1", "4", "5", "6"}));
  EXPECT_EQ(logger_.count(LogLevel::kWarning,
                          "notify command failed n=1 result=\"timed out\" timeout=2s"),
            1u);
}

TEST_F(EventCommandsTest, KeepingOneWaitingRunsOnlyTheNewest) {
  children_.runs_for = 1s;
  auto q = make(1);
  for (int i = 1; i <= 4; ++i) q->run("rs1", cmd(std::to_string(i)));
  EXPECT_EQ(logger_.count(LogLevel::kInfo, "notify command skipped, a newer event replaces it n=2"),
            1u);
  sim_.advance(5s);
  EXPECT_EQ(started(), (std::vector<std::string>{"1", "4"}));
}

TEST_F(EventCommandsTest, SubjectsDoNotWaitForEachOther) {
  children_.runs_for = 1s;
  auto q = make(64);
  q->run("rs1", cmd("a"));
  q->run("rs2", cmd("b"));
  EXPECT_EQ(q->running(), 2u);
  EXPECT_EQ(children_.starts.at(1).at, children_.starts.at(0).at);
  sim_.advance(2s);
}

TEST_F(EventCommandsTest, ACommandThatCannotStartIsLoggedAndTheNextOneRuns) {
  children_.runs_for = 1s;
  children_.programs["/usr/local/sbin/broken"] = {1s, 0, /*cannot_start=*/true};
  auto q = make(64);
  q->run("director", cmd("1"));
  EventCommand broken = cmd("2");
  broken.command.argv[0] = "/usr/local/sbin/broken";
  q->run("director", broken);
  q->run("director", cmd("3"));
  sim_.advance(5s);
  EXPECT_EQ(started(), (std::vector<std::string>{"1", "3"}));
  EXPECT_EQ(logger_.count(LogLevel::kError,
                          "cannot run the notify command n=2: no children here; check notify.role"),
            1u);
  EXPECT_EQ(q->running(), 0u);
}

TEST_F(EventCommandsTest, AFailedCommandIsLoggedWithItsStatusAndTheNextRuns) {
  children_.exit_code = 3;
  auto q = make(64);
  q->run("director", cmd("1"));
  q->run("director", cmd("2"));
  sim_.advance(1s);
  EXPECT_EQ(started(), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(logger_.count(LogLevel::kWarning, "notify command failed n=1 result=\"exit 3\""), 1u);
  EXPECT_EQ(logger_.count(LogLevel::kWarning, "notify command failed n=2 result=\"exit 3\""), 1u);
}

TEST_F(EventCommandsTest, ClearKillsWhatRunsAndForgetsWhatWaits) {
  children_.runs_for = 1h;
  auto q = make(64);
  q->run("director", cmd("1"));
  q->run("director", cmd("2"));
  q->clear();
  EXPECT_EQ(children_.running, 0u);
  EXPECT_EQ(q->waiting(), 0u);
  sim_.advance(2h);
  EXPECT_EQ(started(), (std::vector<std::string>{"1"}));
}

}  // namespace
}  // namespace tandem::resources
