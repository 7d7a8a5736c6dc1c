#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_node.h"
#include "common/duration.h"
#include "common/result.h"
#include "config/config.h"
#include "config/diagnostics.h"
#include "config/file_system.h"
#include "ipc/admin_handler.h"
#include "ipc/status_json.h"
#include "loop/dispatcher.h"
#include "tandemd/ipvs_manager.h"
#include "tandemd/logger.h"
#include "tandemd/notifier.h"

namespace tandem::tandemd {

struct DaemonOptions {
  std::string config_path;
  // WATCHDOG_USEC: the service manager kills the daemon after this long without a ping, so
  // pings go out at half of it. Unset: no watchdog.
  std::optional<Millis> watchdog_period;
  // Set when tandemd forked away from the process the service manager started, so that
  // READY=1 names the process to supervise.
  std::optional<int> main_pid;
  // Builds this node's part in the cluster from the running config (the shell passes the real
  // corosync, sockets and children; a test may leave it unset for a daemon without a cluster).
  std::function<Result<std::unique_ptr<cluster::ClusterNode>>(const config::Config&)> make_cluster;
  // Runs for every accepted config, at start before anything is built and after each reload:
  // the shell checks (with [ipvs] set_sysctls also sets) the kernel settings the forwarding
  // methods need (resources/sysctl) and logs what it finds. Unset: no check.
  std::function<void(const config::Config&)> check_kernel_settings;
  // Opens the kernel's IPVS table (NetlinkKernel in the shell, a fake in tests). Unset: this
  // tandemd keeps no IPVS table.
  OpenIpvsKernel open_ipvs;
  // Keeps the IPVS services tandem owns across a restart (unset: in memory only).
  OpenOwnedStore open_ipvs_owned;
  // A clean stop hands the services over first; this long at most.
  Millis stop_timeout{10000};
};

// The daemon process as an object: the running config, the signals, readiness and the
// watchdog. The cluster core will hang off it. Everything it touches comes in through the
// constructor, so tests drive it on simulated time; it never blocks and never sleeps.
class Daemon final : public ipc::AdminHandler {
 public:
  Daemon(loop::Dispatcher& dispatcher, Notifier& notifier, Logger& logger,
         const config::FileSystem& files, DaemonOptions options);
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Loads the config, watches TERM, INT and HUP, sends READY=1 with a STATUS= and starts the
  // watchdog. An invalid config is logged diagnostic by diagnostic and fails the start; the
  // process then exits 1.
  [[nodiscard]] Result<void> start();

  // The running config; only after start() succeeded.
  const config::Config& config() const { return *config_; }
  // 1 for the config start() loaded, one more for each reload that was accepted.
  uint64_t generation() const { return generation_; }
  bool stopping() const { return stopping_; }
  cluster::ClusterNode* clusterNode() { return cluster_.get(); }

  // ipc::AdminHandler: what `tandem` asks for.
  nlohmann::json status() override;
  Result<nlohmann::json> standby(const std::string& node, bool on) override;
  Result<nlohmann::json> move(const std::string& target) override;
  Result<nlohmann::json> clear() override;
  Result<nlohmann::json> reload() override;
  Result<nlohmann::json> ipvs() override;

  // The IPVS table's keeper; null when options.open_ipvs is unset.
  const IpvsManager* ipvsManager() const { return ipvs_.get(); }

 private:
  void reloadConfig();
  void stop(loop::Signal why);
  void finishStop();
  void pingWatchdog();
  void logDiagnostics(const config::Diagnostics& diagnostics);
  void applyLogLevel();
  // "config generation 2: cluster prod, 3 nodes", for STATUS=.
  std::string describeRunning() const;
  // "generation=2 cluster=prod nodes=3 vips=1 services=2", for log lines.
  std::string runningContext() const;

  loop::Dispatcher& dispatcher_;
  Notifier& notifier_;
  Logger& logger_;
  const config::FileSystem& files_;
  DaemonOptions options_;

  std::optional<config::Config> config_;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  Millis watchdog_interval_{0};
  std::unique_ptr<loop::Timer> watchdog_timer_;
  std::vector<std::unique_ptr<loop::SignalWatch>> signal_watches_;
  std::unique_ptr<cluster::ClusterNode> cluster_;
  std::unique_ptr<IpvsManager> ipvs_;
  std::unique_ptr<loop::Timer> stop_timer_;
  loop::MonoTime stop_deadline_{};
};

}  // namespace tandem::tandemd
