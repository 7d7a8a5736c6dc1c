#pragma once

// What the end-to-end tests of the `tandem` binary share: running a process to completion with
// its output captured, and a fixture that serves a canned status with fake_tandemd.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "golden_file.h"

namespace tandem::cli::testing {

inline std::filesystem::path golden(const std::string& file) {
  return std::filesystem::path(GOLDEN_DIR) / file;
}

struct Outcome {
  std::string out;
  std::string err;
  int exit_code = -1;
};

[[noreturn]] inline void execOrDie(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  ::_exit(127);
}

// Runs argv to completion, collecting stdout and stderr.
inline Outcome run(const std::vector<std::string>& argv) {
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

// A fresh ipc name per test, and fake_tandemd serving one canned status under it.
class FakeTandemdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    name_ = "tandem-cli-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  }

  // Starts fake_tandemd serving golden/CANNED.json (recording change requests in
  // request_log when given) and waits for its "ready".
  void serve(const std::string& canned, const std::string& request_log = "") {
    int out[2];
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    daemon_ = ::fork();
    if (daemon_ == 0) {
      ::dup2(out[1], 1);
      std::vector<std::string> argv{FAKE_TANDEMD_PATH, name_, golden(canned + ".json").string()};
      if (!request_log.empty()) argv.push_back(request_log);
      execOrDie(argv);
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

}  // namespace tandem::cli::testing
