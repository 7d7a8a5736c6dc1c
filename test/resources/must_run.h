#pragma once

#include <sched.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

// What the tests on the real kernel share: the rule for a test that cannot run here (SKIPPED
// and success, except under TANDEM_TEST_NO_SKIP=1, as in CI, where it is a failure), and the
// private network namespace they work in, which dies with the test process.
namespace tandem::test {

// TANDEM_TEST_NO_SKIP=1: every test must run; one that cannot is a failure.
inline bool mustRun() {
  const char* v = std::getenv("TANDEM_TEST_NO_SKIP");
  return v != nullptr && std::string(v) == "1";
}

// main()'s answer when the tests cannot run for `why`: "SKIPPED: why" and 0, or under
// TANDEM_TEST_NO_SKIP=1 the reason on stderr and 1.
inline int cannotRun(const std::string& why) {
  if (mustRun()) {
    std::fprintf(stderr, "cannot run (TANDEM_TEST_NO_SKIP=1): %s\n", why.c_str());
    return 1;
  }
  std::printf("SKIPPED: %s\n", why.c_str());
  return 0;
}

// Runs a shell command; its stdout and stderr together. status: pclose's.
inline std::string sh(const std::string& cmd, int* status = nullptr) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int st = ::pclose(p);
  if (status != nullptr) *status = st;
  return out;
}

// Moves this process into a new network namespace; "" or why not. `needs` names what the test
// needs root for, for the message.
inline std::string enterPrivateNetns(const std::string& needs) {
  if (::geteuid() != 0) return "needs root (" + needs + ")";
  if (::unshare(CLONE_NEWNET) != 0) {
    return std::string("cannot create a network namespace: ") + std::strerror(errno);
  }
  return "";
}

}  // namespace tandem::test
