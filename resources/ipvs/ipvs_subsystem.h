#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "common/drain.h"
#include "common/result.h"
#include "config/config.h"
#include "core/subsystem.h"
#include "ipvs/ipvs_json.h"
#include "ipvs/ipvs_model.h"
#include "ipvs/reconciler.h"
#include "loop/dispatcher.h"
#include "sysctl/sysctl_access.h"

namespace tandem::resources::ipvs {

// Opens the kernel's IPVS table (the platform's generic netlink socket, or a fake).
using OpenIpvsKernel = std::function<Result<std::unique_ptr<Kernel>>()>;
// Where the services tandem owns are kept across a restart, given [daemon] state_dir (the
// platform passes an OwnedFile at <state_dir>/ipvs-owned). Unset: only in memory.
using OpenOwnedStore = std::function<std::unique_ptr<OwnedStore>(const std::string& state_dir)>;

struct IpvsDeps {
  loop::Dispatcher& dispatcher;
  OpenIpvsKernel open;
  OpenOwnedStore open_owned;  // may be unset
  IpvsLog log;
  // The kernel settings the forwarding methods need, checked at every config (and set with
  // [ipvs] set_sysctls). Unset: not checked.
  const sysctl::SysctlReader* sysctl_reader = nullptr;
  sysctl::SysctlWriter* sysctl_writer = nullptr;
};

// The IPVS table on this director, whatever its role: the backup's table is ready for a
// takeover and for the sync daemon's connections. Built from each loaded config (start and
// reload). A config without [[virtual_server]] opens nothing, so a director without IPVS runs.
// A kernel without IPVS is an error logged once; the daemon runs on (cluster and VIPs work) and
// tries again every [ipvs] monitor_interval. Not a start/stop resource: in the takeover order
// (Stage::kIpvs) it only asks for a verify pass if the table is not known to be in place.
// Answers `tandem ipvs show`.
class IpvsSubsystem final : public Subsystem {
 public:
  IpvsSubsystem(IpvsDeps deps, std::string self);
  IpvsSubsystem(const IpvsSubsystem&) = delete;
  IpvsSubsystem& operator=(const IpvsSubsystem&) = delete;
  ~IpvsSubsystem() override;

  std::string_view name() const override { return "ipvs"; }
  void configure(const config::Config& next, const config::Config* running,
                 const config::ReloadDiff& diff) override;
  std::vector<HeldResource> held() override;
  void registerCommands(CommandTable& table) override;
  void shutdown() override;
  // The table as the last dump found it: services, real servers, their weights and counters.
  void writeMetrics(metrics::Exposition& out) const override;

  // The entries of the kernel's connection table, as the last dump counted them on the real
  // servers (active + inactive; templates not included): what the heartbeats carry for a
  // sync-aware failback. 0 before the first dump.
  uint64_t connections() const;
  // The persistence templates in the same dump (what keeps a client on its real server); 0
  // before the first dump.
  uint64_t templates() const;
  // The ipvs answer of protocol.h.
  [[nodiscard]] Result<nlohmann::json> show();

  // The table is kept (the kernel could be opened).
  bool running() const { return loop_ != nullptr; }
  const IpvsReconcileLoop* reconcileLoop() const { return loop_.get(); }
  // A takeover found the table not yet verified and asked for a pass.
  void onTakeover();
  // A real server's health changed (the health subsystem): its weight, its removal or the
  // fallback follow in a small change pass. Kept for a kernel opened later.
  void setHealth(const std::string& virtual_server, const Endpoint& real_server, bool up,
                 std::optional<int> weight = std::nullopt);
  // The drained real servers, cluster wide (the cluster's DrainBook): weight 0 over whatever
  // the checks say. Kept for a kernel opened later and across reloads.
  void setDrains(const std::vector<DrainTarget>& targets);
  // How far a drain has come in this director's table: known once a dump taken after the
  // weight-0 write shows the server at 0 (a server the table does not hold has nothing left).
  DrainProgress drainProgress(const DrainTarget& t) const;

 private:
  // A count summed over every destination of the last dump; 0 before the first.
  uint64_t sumOfDestinations(const std::function<uint64_t(const DestinationState&)>& count) const;
  void tryOpen();
  void checkKernelSettings(const config::Config& cfg);
  void log(LogLevel level, const std::string& line) const;

  IpvsDeps deps_;
  std::string self_;
  std::optional<config::Config> config_;
  // Declared before the loop, which holds references to them. The owned store is opened with
  // the kernel, from the state_dir of that moment.
  std::unique_ptr<Kernel> kernel_;
  std::unique_ptr<OwnedStore> owned_store_;
  std::unique_ptr<IpvsReconcileLoop> loop_;
  std::unique_ptr<loop::Timer> retry_;
  std::string open_error_;  // why the kernel could not be opened; "" when it was
  HealthReports health_;    // every report so far
  std::set<std::pair<ServiceKey, DestKey>> drained_;
  // Per drain: the dumps() its counts wait for (one that began after the weight-0 write).
  std::map<std::pair<ServiceKey, DestKey>, size_t> drained_since_;
  std::shared_ptr<Resource> takeover_step_;
  // The label sets of the last table scraped, rendered again only when its services or real
  // servers (their keys) changed, or a reload the names: most scrapes only format numbers. One
  // buffer for all, read front to back by a scrape (10,000 strings of their own cost it a cache
  // miss each).
  struct MetricLabels {
    uint64_t keys = 0;  // tableKeys() of the table they were made for
    uint64_t config_generation = 0;
    std::string text;
    std::vector<std::pair<uint32_t, uint32_t>> vs;  // {vs="..."} per service: offset, size
    std::vector<std::pair<uint32_t, uint32_t>> rs;  // {vs=,rs=} per real server, table order
  };
  mutable MetricLabels metric_labels_;
  uint64_t config_generation_ = 0;  // one more at every configure
};

}  // namespace tandem::resources::ipvs
