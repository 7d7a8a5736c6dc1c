#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cluster/drain_book.h"
#include "cluster/frame_link.h"
#include "common/drain.h"
#include "common/log.h"
#include "common/state_files.h"
#include "common/sync_report.h"
#include "config/config.h"
#include "config/file_system.h"
#include "core/resource_chain.h"
#include "corosync/group_bus.h"
#include "corosync/nodelist.h"
#include "election/cluster_core.h"
#include "loop/dispatcher.h"
#include "ping/pinger.h"
#include "process/child_runner.h"
#include "wire/key_ring.h"
#include "wire/receiver.h"
#include "wire/sealer.h"

namespace tandem::cluster {

// What the shell hands the node: the OS pieces, built by tandemd's main (or by a test).
struct NodeEnv {
  loop::Dispatcher& dispatcher;
  process::ChildRunner& children;
  LogSink log;
  // Builds the group bus with the node as its listener (CpgBus in production).
  std::function<Result<std::unique_ptr<corosync::GroupBus>>(corosync::GroupBusListener&)> make_bus;
  std::vector<corosync::NodelistEntry> nodelist;  // corosync's, to name CPG members
  // wire::makeIncarnation(now, random); create() raises it past the last run's, kept in
  // state_dir/incarnation, so that a clock stepped back does not make peers drop this node.
  uint64_t incarnation = 0;
  std::string state_dir;             // where the role file lives
  std::optional<uint16_t> udp_port;  // override of cluster.heartbeat_port (tests)
  // Opens the tiebreaker's echo transport (raw ICMP sockets in production); needed only with
  // [cluster.tiebreaker].
  ping::MakeEchoTransport make_echo;
  // Opens the fast heartbeat path on a port (UdpLink in production).
  std::function<Result<std::unique_ptr<FrameLink>>(uint16_t port, FrameLink::OnFrame)> make_link;
  // The role and holder files (PosixStateFiles in production).
  StateFiles* state_files = nullptr;
  // The key files (PosixFileSystem in production).
  const config::FileSystem* files = nullptr;
  // Milliseconds since the epoch, for operator moves; unset: the system clock.
  std::function<uint64_t()> wall_clock;
  // Told every role change, after the node's own handling of it.
  std::function<void(election::Role)> on_role;
  // The drained real servers: told the set at start and at every change (the IPVS table
  // applies it), asked how far each drain has come in this director's table (the heartbeats
  // carry it). Either may be unset.
  DrainHooks drains;
  // Told every role change the core makes, with its cause, as it is made: before the resources
  // of that transition are started or stopped. on_role, by contrast, is told the role each
  // handling reached (a takeover whose resources answered at once is ACTIVE without a
  // TAKING_OVER of its own). May be unset.
  std::function<void(const election::RoleChange&)> on_role_change{};
};

// What `tandem real drain --wait` reads: the drains and how far each has come on every node
// that reports them (this one now, the peers as their last heartbeat said).
struct DrainView {
  uint64_t generation = 0;
  std::vector<DrainTarget> targets;
  struct NodeReport {
    std::string name;
    std::string role;               // as the node last said (this node: its role now)
    std::optional<int64_t> age_ms;  // how old the report is (null for this node)
    std::map<DrainTarget, DrainProgress> progress;
  };
  std::vector<NodeReport> nodes;  // this node first
};

// One director's part in the cluster: the pure ClusterCore driven from the loop. Heartbeats go
// out on UDP every heartbeat_interval and over CPG every group_heartbeat_interval, signed;
// frames from either path are verified and handed to the core; the core's actions start and
// stop the resource chain, run the fence command, persist the role and log.
class ClusterNode final : public corosync::GroupBusListener {
 public:
  // Loads the keys, opens the UDP port, reads the persisted role; fails with a message that
  // says what to fix (a key file, a busy port, a node missing from the config).
  [[nodiscard]] static Result<std::unique_ptr<ClusterNode>> create(
      NodeEnv env, const config::Config& cfg, std::string self,
      resources::ResourceChain::List resources);
  ~ClusterNode() override;

  // Joins the group and begins heartbeating.
  [[nodiscard]] Result<void> start();

  // A reload: keys (loaded by the caller with loadKeyRing, so that a bad key file refuses the
  // reload before anything changes), nodes and priorities, timers, failback, the tiebreaker
  // and fencing. Neither the role nor the peers' replay windows are reset.
  void reconfigure(const config::Config& cfg, wire::KeyRing keys);
  // The resources to hold, in takeover order (a reload may add and remove some): while held,
  // the difference is stopped and started; those that stay are not touched.
  void setResources(resources::ResourceChain::List resources);

  void onQuorum(bool quorate);
  // The votequorum connection is gone: its last answer is held for quorum_hold.
  void onQuorumLost();
  // Operator requests (from the admin channel).
  // With a lifetime, the standby or the move ends by itself (ClusterCore::onStandby, onMove).
  void setStandby(bool on, std::optional<Millis> lifetime = std::nullopt);
  void move(const std::string& target,  // "" clears
            std::optional<Millis> lifetime = std::nullopt);
  // Cluster wide (ClusterCore::onMaintenance); kept in state_dir/maintenance for a restart.
  void setMaintenance(bool on);
  // Drains (on) or enables t cluster wide; kept in STATE_DIR/drains. False when it already
  // was; fails when kMaxDrains are drained already.
  [[nodiscard]] Result<bool> setDrain(const DrainTarget& t, bool on);
  DrainView drains() const;
  const DrainBook& drainBook() const { return drains_; }
  bool maintenance() const { return core_.maintenance(); }
  const std::string& lastReason() const { return core_.lastReason(); }
  const std::array<uint64_t, election::kRoleEventCount>& roleChanges() const {
    return core_.roleChanges();
  }
  uint64_t takeovers() const { return core_.takeovers(); }
  std::optional<Millis> lastTakeover() const { return core_.lastTakeover(); }
  void clearFailures();
  // The share of healthy real servers this director's checks see, per mille (1000 without
  // checks; election::kHealthNoRealServer when none is up): the Health it advertises.
  void setServiceHealth(int permille);
  // Connection sync on this director (ClusterCore::onSyncState): carried in every heartbeat.
  void setSyncState(const SyncReport& sync);

  election::CoreStatus status() const;
  election::ClusterCore::Explanation explain() const { return core_.explain(now()); }
  // The resources in chain order: [{"name", "present", ...describe()}], for `tandem status`.
  nlohmann::json resourcesJson() const;
  const wire::FrameCounters& frameCounters() const { return receiver_.counters(); }
  election::Role role() const { return core_.role(); }
  const std::string& clusterName() const { return cluster_; }
  // The tiebreaker's verdict; nullopt when none is configured.
  std::optional<ping::Reach> tiebreaker() const;

  // GroupBusListener
  void onMessage(uint32_t nodeid, uint32_t pid, std::span<const uint8_t> bytes) override;
  void onGroupChange(const corosync::GroupChange& change) override;
  void onMembership(const corosync::RingMembership& ring) override;
  void onConnected() override;
  void onConnectionLost(const Error& cause, size_t discarded) override;
  void onConnectFailed(const Error& cause, Millis retry_in) override;

 private:
  ClusterNode(NodeEnv env, const config::Config& cfg, std::string self, wire::KeyRing keys,
              election::CoreConfig core_cfg, election::Startup startup,
              resources::ResourceChain::List resources);

  [[nodiscard]] Result<void> openTiebreaker(const config::Config& cfg);
  void applyPeers(const config::Config& cfg);

  void handle(const election::Actions& actions);
  // came_from: the node the path says sent it (CPG's nodeid, UDP's source address; "" for an
  // address that is no peer's), nullopt when the path cannot say (a nodeid not in the nodelist).
  void onFrame(std::span<const uint8_t> bytes, const std::string& path,
               const std::optional<std::string>& came_from);
  void sendHeartbeat(bool udp, bool group);
  wire::Heartbeat heartbeat() const;  // the core's, with the drains
  void onPeerDrains(const std::string& sender, const wire::Heartbeat& hb);
  void drainsChanged(const std::string& why);
  void sendRelease(const std::string& target);
  void broadcast(const Result<tandem::Bytes>& udp_copy, const Result<tandem::Bytes>& group_copy);
  void runFence(const std::string& peer);
  void persistRole(const std::string& role);
  // Past last and at least the wall clock in ms: orders operators' requests cluster wide.
  uint64_t nextGeneration(uint64_t last) const;
  void armDeadline();
  void setTiebreakerOk(bool ok);
  void pushHealth();
  std::optional<std::string> nameOf(uint32_t nodeid) const;
  void onReach(const ping::ReachChange& change);
  election::Time now() const { return dispatcher_.now(); }

  loop::Dispatcher& dispatcher_;
  NodeEnv env_;
  std::string cluster_;
  std::string self_;
  config::Cluster cluster_cfg_;
  wire::KeyRing keys_;
  wire::FrameSealer sealer_;
  wire::FrameReceiver receiver_;
  election::ClusterCore core_;
  resources::ResourceChain chain_;
  std::unique_ptr<FrameLink> udp_;
  std::unique_ptr<corosync::GroupBus> bus_;
  std::unique_ptr<loop::Timer> beat_timer_;
  std::unique_ptr<loop::Timer> group_timer_;
  std::unique_ptr<loop::Timer> deadline_timer_;
  std::unique_ptr<loop::Timer> monitor_timer_;
  std::unique_ptr<process::ChildHandle> fence_;
  std::map<std::string, uint32_t> peer_nodeids_;
  std::map<IpAddress, std::string> udp_senders_;  // each peer's UDP address, to its name
  // The peer a CPG delivery from nodeid speaks for (see onFrame's came_from).
  std::optional<std::string> cpgSender(uint32_t nodeid) const;
  uint64_t move_generation_ = 0;
  DrainBook drains_;
  struct PeerDrains {
    std::string role;
    election::Time at;
    std::map<DrainTarget, DrainProgress> progress;
  };
  std::map<std::string, PeerDrains> peer_drains_;
  // A restart that found its resources in place keeps them while the first ping round is out.
  bool resuming_ = false;
  election::Role reported_role_ = election::Role::kInit;
  bool tiebreaker_ok_ = true;
  int service_health_ = 1000;
  std::unique_ptr<ping::Pinger> pinger_;  // last: its callbacks use the members above
};

// Reads the configured key files into a ring (relative paths against the config's directory).
[[nodiscard]] Result<wire::KeyRing> loadKeyRing(const config::Config& cfg,
                                                const config::FileSystem& files);

// The election's view of the config: this node's priority, the peers', the timers, the policy.
election::CoreConfig coreConfig(const config::Config& cfg, const std::string& self);

}  // namespace tandem::cluster
