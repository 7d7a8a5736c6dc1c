#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"
#include "config/config.h"
#include "ipvs/ipvs_model.h"
#include "ipvs/reconciler.h"
#include "loop/dispatcher.h"
#include "tandemd/logger.h"

namespace tandem::tandemd {

// Opens the kernel's IPVS table (the shell passes NetlinkKernel::open).
using OpenIpvsKernel = std::function<Result<std::unique_ptr<resources::ipvs::Kernel>>()>;
// Where the services tandem owns are kept across a restart, given [daemon] state_dir (the shell
// passes an OwnedFile at <state_dir>/ipvs-owned). Unset: only in memory.
using OpenOwnedStore =
    std::function<std::unique_ptr<resources::ipvs::OwnedStore>(const std::string& state_dir)>;

// The IPVS table on this director, whatever its role: the backup's table is ready for a
// takeover and for the sync daemon's connections. Built from each loaded config (start and
// reload). A config without [[virtual_server]] opens nothing, so a director without IPVS runs.
// A kernel without IPVS is an error logged once; the daemon runs on (cluster and VIPs work) and
// tries again every [ipvs] monitor_interval.
class IpvsManager {
 public:
  IpvsManager(loop::Dispatcher& dispatcher, Logger& logger, OpenIpvsKernel open,
              OpenOwnedStore open_owned = nullptr);
  IpvsManager(const IpvsManager&) = delete;
  IpvsManager& operator=(const IpvsManager&) = delete;
  ~IpvsManager();

  // Takes the running config (again on reload) and reconciles now.
  void configure(const config::Config& cfg);
  // The ipvs answer of protocol.h: the kernel's table, dumped now.
  [[nodiscard]] Result<nlohmann::json> show();

  // The table is kept (the kernel could be opened).
  bool running() const { return loop_ != nullptr; }
  const resources::ipvs::IpvsReconcileLoop* reconcileLoop() const { return loop_.get(); }

 private:
  void tryOpen();

  loop::Dispatcher& dispatcher_;
  Logger& logger_;
  OpenIpvsKernel open_;
  OpenOwnedStore open_owned_;
  std::optional<config::Config> config_;
  // Declared before the loop, which holds references to them. The owned store is opened with
  // the kernel, from the state_dir of that moment.
  std::unique_ptr<resources::ipvs::Kernel> kernel_;
  std::unique_ptr<resources::ipvs::OwnedStore> owned_store_;
  std::unique_ptr<resources::ipvs::IpvsReconcileLoop> loop_;
  std::unique_ptr<loop::Timer> retry_;
  std::string open_error_;  // why the kernel could not be opened; "" when it was
};

}  // namespace tandem::tandemd
