#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "loop/dispatcher.h"

// A second daemon for the component tests: a real process that runs a CpgBus on its own
// QbDispatcher (the test binary re-executed with --cpg-peer GROUP), driven over stdin and
// reporting every callback as a line on stdout. Corosync knows group members by (nodeid, pid),
// so a second member on the same node has to be a second process.
namespace tandem::corosync::test {

inline constexpr std::string_view kPeerFlag = "--cpg-peer";

// The peer's main. Commands on stdin: "send <text>", "quit" (destroys the bus, so the group
// sees a clean leave, then exits 0). Lines on stdout: "connected <nodeid> <pid>", "ready" (it
// saw itself join), "joined|left <nodeid> <pid> <reason>", "msg <nodeid> <pid> <text>",
// "lost <discarded> <cause>", "connect-failed <cause>", "send-failed <cause>", "bye".
int runCpgPeer(const std::string& group);

// The test's handle on a peer process, its stdout read on the test's dispatcher.
class PeerProcess {
 public:
  [[nodiscard]] static Result<std::unique_ptr<PeerProcess>> spawn(loop::Dispatcher& dispatcher,
                                                                  const std::string& group);
  // SIGKILLs the peer if it still runs and reaps it.
  ~PeerProcess();
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] Result<void> command(std::string_view line);
  [[nodiscard]] bool saw(std::string_view line_prefix) const;
  [[nodiscard]] size_t count(std::string_view line_prefix) const;
  [[nodiscard]] const std::vector<std::string>& lines() const { return lines_; }
  bool kill(int sig);
  // Reaps the peer if it has exited; true once it has.
  bool tryReap();
  [[nodiscard]] std::optional<int> exitStatus() const { return exit_status_; }

 private:
  PeerProcess(pid_t pid, int to_child, int from_child);
  void onReadable();

  pid_t pid_;
  int to_child_;
  int from_child_;
  std::unique_ptr<loop::FdWatch> watch_;
  std::string partial_;
  std::vector<std::string> lines_;
  std::optional<int> exit_status_;
};

}  // namespace tandem::corosync::test
