#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/duration.h"
#include "common/result.h"
#include "config/config.h"
#include "config/config_diff.h"
#include "config/config_loader.h"
#include "config/diagnostics.h"
#include "config/failback_override.h"
#include "core/subsystem.h"
#include "director/cluster_subsystem.h"
#include "director/history.h"
#include "ipc/admin_handler.h"
#include "metrics/exposition.h"
#include "metrics/loop_lag.h"
#include "platform/platform.h"

namespace tandem::director {

struct DirectorOptions {
  std::string config_path;
  std::string node_name;  // this director's [[node]]
  // WATCHDOG_USEC: the service manager kills the daemon after this long without a ping, so
  // pings go out at half of it. Unset: no watchdog.
  std::optional<Millis> watchdog_period;
  // Set when tandemd forked away from the process the service manager started, so that
  // READY=1 names the process to supervise.
  std::optional<int> main_pid;
  // A clean stop hands the services over first; this long at most.
  Millis stop_timeout{10000};
  // Join the cluster and serve `tandem` (a config check or a test of the process object
  // alone may run without them).
  bool with_cluster = true;
  // TANDEM_FAILBACK from the unit's environment file (tandemd --failback): imposed over
  // [cluster] failback at start and at every reload; "" for none.
  std::string failback_override;
  // For tandem_info: the package's version.
  std::string version;
};

// One director: the running config, its subsystems (the cluster, then those of the registry,
// subsystem_registry.h), the signals, readiness, the watchdog, reloads and the admin channel.
// Everything it touches comes from the Platform, so tests run two or three of them on one
// simulated dispatcher; it never blocks and never sleeps.
class Director final : public ipc::AdminHandler, private resources::CommandTable {
 public:
  Director(platform::Platform& platform, DirectorOptions options);
  ~Director() override;
  Director(const Director&) = delete;
  Director& operator=(const Director&) = delete;

  // Loads the config, builds and starts every subsystem, watches TERM, INT and HUP, serves
  // `tandem`, sends READY=1 with a STATUS= and starts the watchdog. An invalid config is logged
  // diagnostic by diagnostic and fails the start; the process then exits 1.
  [[nodiscard]] Result<void> start();

  // Loads the file again and applies every section, or refuses (naming each key that cannot
  // change live, with both values) and keeps the running config and state. HUP calls it.
  void reloadConfig();
  // SIGTERM: hands the services over, then stops the loop.
  void stop(const std::string& why);

  // The running config; only after start() succeeded.
  const config::Config& config() const { return *config_; }
  // 1 for the config start() loaded, one more for each reload that was accepted.
  uint64_t generation() const { return generation_; }
  bool stopping() const { return stopping_; }
  cluster::ClusterNode* clusterNode() { return cluster_ ? cluster_->node() : nullptr; }
  // The subsystem of that name; null when there is none.
  resources::Subsystem* subsystem(std::string_view name);
  // What the last reload said: accepted or refused, and why.
  const std::optional<config::ReloadDiff>& lastReload() const { return last_reload_; }

  // ipc::AdminHandler: what `tandem` asks for.
  nlohmann::json status() override;
  Result<nlohmann::json> standby(const ipc::StandbyArgs& args) override;
  Result<nlohmann::json> move(const ipc::MoveArgs& args) override;
  Result<nlohmann::json> maintenance(bool on) override;
  Result<nlohmann::json> drain(const ipc::DrainArgs& args) override;
  Result<nlohmann::json> drains() override;
  Result<nlohmann::json> clear() override;
  Result<nlohmann::json> reload() override;
  Result<nlohmann::json> ipvs() override;
  Result<nlohmann::json> sync() override;
  Result<nlohmann::json> configDiff() override;
  Result<nlohmann::json> configShow() override;
  Result<nlohmann::json> history(uint64_t since_ms) override;
  Result<nlohmann::json> explain() override;
  void audited(const std::string& request, const std::string& who, const std::string& body,
               const std::string& result) override;
  const History& historyLog() const { return history_; }
  // What a scrape of the metrics endpoint returns (conf/metrics.md).
  std::string scrape(metrics::Format format);

 private:
  // resources::CommandTable
  void add(std::string name, resources::CommandHandler handler) override;
  Result<nlohmann::json> command(const std::string& name, const nlohmann::json& args);

  // The cluster, then the registry's parts: the order they are prepared, configured, started.
  std::vector<resources::Subsystem*> parts();
  // Tries what can fail for next (null: the config start() loaded) in every part.
  [[nodiscard]] Result<void> prepareAll(const config::Config* next);
  void onRole(election::Role role);
  void onRoleChange(const election::RoleChange& change);
  void applyHeld();
  void finishStop();
  // Adds to the history (stamped now) and writes it out within a second.
  void record(HistoryEntry entry);
  void loadHistory();
  void persistHistory();
  void pingWatchdog();
  void logDiagnostics(const config::Diagnostics& diagnostics);
  // Reads the config file with the failback override put in; the file's own failback goes to
  // file_failback (when given), for failback_file_ once the config is taken.
  config::LoadResult loadConfig(config::FailbackSetting* file_failback);
  // {"policy", "delay_ms", "source": "TANDEM_FAILBACK" or "config file", "config_file": what
  // the file says}
  nlohmann::json failbackJson() const;
  void applyLogLevel();
  // The endpoint [metrics] asks for, opened; null when it is off. The running one stays open
  // meanwhile, unless only it stands in the way (the same port), and is back if the new one
  // cannot be had.
  [[nodiscard]] Result<std::unique_ptr<platform::Handle>> openMetrics(const config::Metrics& next);
  void writeMetrics(metrics::Exposition& out) const;
  // The endpoint now served (null: none), and the loop-lag probe with it.
  void setMetrics(std::unique_ptr<platform::Handle> endpoint);
  // A record for the journal (TANDEM_NODE and TANDEM_CLUSTER added) beside the log line.
  void journal(JournalKind kind, LogLevel level, std::string line,
               std::vector<std::pair<std::string, std::string>> fields);
  // The VIPs this director can hold (on its interfaces), as the config writes them.
  std::vector<std::string> myVips() const;
  void refuseReload(const std::string& why, size_t errors);
  std::string describeRunning() const;
  std::string runningContext() const;

  platform::Platform& platform_;
  DirectorOptions options_;
  std::optional<config::Config> config_;
  std::string config_text_;  // what config_ was read from
  std::optional<config::FailbackSetting> failback_override_;
  config::FailbackSetting failback_file_;  // the running config file's own failback
  uint64_t generation_ = 0;
  bool stopping_ = false;
  bool started_ = false;
  Millis watchdog_interval_{0};
  std::unique_ptr<loop::Timer> watchdog_timer_;
  std::vector<std::unique_ptr<loop::SignalWatch>> signal_watches_;
  // The cluster first: it drives the held chain that the others fill.
  std::unique_ptr<ClusterSubsystem> cluster_;
  std::vector<std::unique_ptr<resources::Subsystem>> subsystems_;
  std::map<std::string, resources::CommandHandler, std::less<>> commands_;
  std::unique_ptr<platform::AdminServer> admin_;
  std::optional<config::ReloadDiff> last_reload_;
  std::unique_ptr<loop::Timer> stop_timer_;
  History history_;
  std::unique_ptr<loop::Timer> history_timer_;  // armed while entries wait to be written
  election::Role last_role_ = election::Role::kInit;
  std::unique_ptr<platform::Handle> metrics_;
  std::unique_ptr<metrics::LoopLag> loop_lag_;
  uint64_t takeovers_ = 0;  // the cluster node's, as last recorded in the history
  size_t last_scrape_size_ = 0;
  loop::MonoTime stop_deadline_{};
};

}  // namespace tandem::director
