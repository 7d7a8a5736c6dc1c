#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "common/duration.h"
#include "common/result.h"

// A single-node corosync for component tests, private to the test process: it runs in network
// and mount namespaces of its own (lo only, tmpfs on /run, /dev/shm, /var/lib/corosync and
// /var/log/corosync), so it collides with no corosync on the host and leaves nothing behind.
namespace tandem::corosync::test {

// Why a machine cannot run these tests, for "SKIPPED: <reason>"; nullopt when it can.
std::optional<std::string> labUnavailableReason();

// Moves the calling process (single-threaded: unshare(CLONE_NEWNS) refuses otherwise) into new
// network and mount namespaces and prepares them. Every process the tests start inherits them,
// which is what a corosync client needs: the node's abstract sockets and its /dev/shm.
// kPermissionDenied when the kernel or the container does not allow it.
[[nodiscard]] Result<void> enterPrivateNamespaces();

class CorosyncLab {
 public:
  static constexpr const char* kNodeName = "tandem-test-1";
  static constexpr uint32_t kNodeId = 1;
  static constexpr uint32_t kTokenMs = 1000;

  explicit CorosyncLab(std::string corosync_binary);
  // Stops corosync if it still runs.
  ~CorosyncLab();
  CorosyncLab(const CorosyncLab&) = delete;
  CorosyncLab& operator=(const CorosyncLab&) = delete;

  // Writes corosync.conf (first call) and starts `corosync -f`; returns once a CPG client can
  // connect, or fails after the deadline with the tail of corosync's log.
  [[nodiscard]] Result<void> start(Millis ready_timeout);
  // Sends sig to the corosync this lab started (by pid); false when none runs.
  bool signal(int sig);
  // Reaps it if it has exited; true when no corosync of this lab runs any more.
  bool tryReap();
  // SIGTERM, then SIGKILL after the grace period; waits for the exit.
  void stop(Millis grace);

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] std::string logTail(size_t lines) const;

 private:
  [[nodiscard]] Result<void> writeConfig();
  // Removes /dev/shm files of processes that are gone (a kill -9 leaks them, and the tmpfs is
  // small): libqb names them qb-<pid>-... and qb-<server>-<client>-...
  void removeStaleShm() const;

  std::string binary_;
  std::string dir_;
  bool config_written_ = false;
  pid_t pid_ = -1;
};

}  // namespace tandem::corosync::test
