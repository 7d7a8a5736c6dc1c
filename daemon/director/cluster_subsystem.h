#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cluster/cluster_node.h"
#include "common/drain.h"
#include "common/sync_report.h"
#include "core/state_file_resource.h"
#include "core/subsystem.h"
#include "ipc/protocol.h"
#include "platform/platform.h"

namespace tandem::director {

// The cluster: this director's ClusterNode (heartbeats, the election, the held chain) and the
// quorum watch. The director hands it every subsystem's held resources in takeover order; it
// contributes the holder file (Stage::kState) and answers standby, move and clear.
class ClusterSubsystem final : public resources::Subsystem, private corosync::QuorumListener {
 public:
  using OnRole = std::function<void(election::Role)>;
  using OnRoleChange = std::function<void(const election::RoleChange&)>;

  // on_role: each role reached; on_role_change: each change as it is made (NodeEnv).
  ClusterSubsystem(platform::Platform& platform, std::string self, OnRole on_role,
                   OnRoleChange on_role_change = {});
  ~ClusterSubsystem() override;

  std::string_view name() const override { return "cluster"; }
  Result<void> prepare(const config::Config& next, const config::Config* running) override;
  void configure(const config::Config& next, const config::Config* running,
                 const config::ReloadDiff& diff) override;
  Result<void> start() override;
  std::vector<resources::HeldResource> held() override;
  nlohmann::json status() const override;
  // The role of every node as heard, the epoch, quorum, heartbeats' age, frames and role
  // changes (conf/metrics.md).
  void writeMetrics(metrics::Exposition& out) const override;
  void shutdown() override;

  // The operator's requests, typed from the admin channel's parse to here (Director forwards
  // them). Each fails "unavailable" before start().
  Result<nlohmann::json> standby(const ipc::StandbyArgs& args);
  Result<nlohmann::json> move(const ipc::MoveArgs& args);
  Result<nlohmann::json> maintenance(bool on);
  Result<nlohmann::json> drain(const ipc::DrainArgs& args);
  Result<nlohmann::json> drains() const;
  Result<nlohmann::json> clear();

  // Every subsystem's held resources, in takeover order.
  void setResources(resources::ResourceChain::List resources);
  // What the health checks see (ClusterNode::setServiceHealth); kept until the node starts.
  void setServiceHealth(int permille);
  // Connection sync on this director (ClusterNode::setSyncState); kept until the node starts.
  void setSyncState(const SyncReport& sync);
  // How the drains reach the IPVS table (the cluster keeps them); set before start().
  void setDrainHooks(DrainHooks hooks) { drain_hooks_ = std::move(hooks); }
  // Null before start().
  cluster::ClusterNode* node() { return node_.get(); }
  const std::string& self() const { return self_; }

 private:
  void onQuorum(bool quorate) override;
  void onConnectionLost(const Error& cause) override;
  void log(LogLevel s, const std::string& line);

  platform::Platform& platform_;
  std::string self_;
  OnRole on_role_;
  OnRoleChange on_role_change_;
  std::optional<config::Config> config_;
  std::optional<wire::KeyRing> prepared_keys_;
  int service_health_ = 1000;
  std::optional<SyncReport> sync_state_;
  DrainHooks drain_hooks_;
  resources::ResourceChain::List resources_;
  std::shared_ptr<resources::StateFileResource> holder_;
  std::unique_ptr<cluster::ClusterNode> node_;
  std::unique_ptr<platform::Handle> quorum_;
};

}  // namespace tandem::director
