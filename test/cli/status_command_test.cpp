// The `tandem` binary end to end: `tandem status` against fake_tandemd (the real IpcServer with
// a canned status) prints exactly the golden text, and without a daemon fails with exit 3.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kGoldenDir = GOLDEN_DIR;

fs::path golden(const std::string& file) { return fs::path(kGoldenDir) / file; }

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Outcome {
  std::string out;
  std::string err;
  int exit_code = -1;
};

[[noreturn]] void execOrDie(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  ::_exit(127);
}

// Runs argv to completion, collecting stdout and stderr.
Outcome run(const std::vector<std::string>& argv) {
  int out[2];
  int err[2];
  EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    execOrDie(argv);
  }
  ::close(out[1]);
  ::close(err[1]);
  Outcome o;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&o.out, &o.err};
  int open = 2;
  while (open > 0) {
    if (::poll(fds, 2, 10000) <= 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

class StatusCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    name_ = "tandem-cli-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  }

  // Starts fake_tandemd serving golden/NAME.json and waits for its "ready".
  void serve(const std::string& canned) {
    int out[2];
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    daemon_ = ::fork();
    if (daemon_ == 0) {
      ::dup2(out[1], 1);
      execOrDie({FAKE_TANDEMD_PATH, name_, golden(canned + ".json").string()});
    }
    ::close(out[1]);
    char buf[16] = {};
    ssize_t n = ::read(out[0], buf, sizeof buf - 1);
    ::close(out[0]);
    ASSERT_GT(n, 0) << "fake_tandemd did not start";
    ASSERT_EQ(std::string(buf), "ready\n");
  }

  void TearDown() override {
    if (daemon_ <= 0) return;
    ::kill(daemon_, SIGTERM);
    int status = 0;
    ::waitpid(daemon_, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "fake_tandemd: " << status;
  }

  std::string name_;
  pid_t daemon_ = -1;
};

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
  EXPECT_EQ(json::parse(o.out), json::parse(readFile(golden("rejected-frames.json"))));
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
