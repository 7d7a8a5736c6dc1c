#include "director/cluster_subsystem.h"

#include <algorithm>

#include "common/duration.h"
#include "ipc/protocol.h"
#include "ipc/status_json.h"
#include "ipvs/ipvs_desired.h"
#include "ipvs/reconciler.h"

namespace tandem::director {

namespace {

std::optional<Millis> lifetimeOf(const std::optional<uint64_t>& ms) {
  if (!ms) return std::nullopt;
  return Millis(static_cast<int64_t>(*ms));
}

DrainTarget drainTarget(const config::VirtualServer& vs, const Endpoint& server) {
  const resources::ipvs::ServiceKey key = resources::ipvs::desiredService(vs).key;
  return DrainTarget{
      key.family, static_cast<uint8_t>(key.protocol), key.address, key.port, key.fwmark, server};
}

// The [[virtual_server]] text names: its key as `tandem ipvs show` prints it ("tcp
// 198.51.100.50:80", "fwmark 7 (IPv4)", or "fwmark 7" when one family has it), its ADDR:PORT
// (when one protocol has it), or its name.
Result<const config::VirtualServer*> findService(const config::Config& cfg,
                                                 const std::string& text) {
  std::vector<const config::VirtualServer*> found;
  for (const config::VirtualServer& vs : cfg.virtual_servers) {
    const std::string key = resources::ipvs::serviceName(resources::ipvs::desiredService(vs).key);
    const bool by_address =
        vs.address && (vs.address->toString() == text || key.substr(key.find(' ') + 1) == text);
    const bool by_mark = vs.fwmark && "fwmark " + std::to_string(*vs.fwmark) == text;
    if (vs.name == text || key == text) return &vs;
    if (by_address || by_mark) found.push_back(&vs);
  }
  if (found.size() == 1) return found.front();
  if (found.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "\"" + text + "\" is no [[virtual_server]] in " + cfg.source +
                    ": name one by its name, as \"tcp ADDR:PORT\", ADDR:PORT or \"fwmark N\" "
                    "(`tandem ipvs show` lists them)");
  }
  return fail(ErrorCode::kInvalidArgument,
              "\"" + text + "\" names " + std::to_string(found.size()) +
                  " virtual services; say which, by name or as `tandem ipvs show` keys it");
}

// The real server of vs that text names: ADDR:PORT, or ADDR when one port has it.
Result<Endpoint> findServer(const config::VirtualServer& vs, const std::string& text) {
  auto ep = Endpoint::parse(text, true);
  if (!ep) {
    return fail(ErrorCode::kInvalidArgument, "\"" + text + "\" is not a real server's ADDR:PORT: " +
                                                 endpointProblem(text, true));
  }
  std::vector<Endpoint> found;
  for (const config::RealServer& rs : vs.real_servers) {
    if (rs.address == *ep || (ep->port == 0 && rs.address.address == ep->address)) {
      found.push_back(rs.address);
    }
  }
  if (found.size() == 1) return found.front();
  if (found.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                text + " is not a real server of " + vs.name + " (`tandem ipvs show` lists them)");
  }
  return fail(ErrorCode::kInvalidArgument, text + " is " + std::to_string(found.size()) +
                                               " real servers of " + vs.name +
                                               " on different ports; give ADDR:PORT");
}

// The [[virtual_server]] that t drains in (null when the running config has none).
const config::VirtualServer* serviceOf(const config::Config& cfg, const DrainTarget& t) {
  for (const config::VirtualServer& vs : cfg.virtual_servers) {
    const DrainTarget mine = drainTarget(vs, t.server);
    if (mine == t) return &vs;
  }
  return nullptr;
}

bool configured(const config::VirtualServer* vs, const DrainTarget& t) {
  if (vs == nullptr) return false;
  return std::any_of(vs->real_servers.begin(), vs->real_servers.end(),
                     [&](const config::RealServer& rs) { return rs.address == t.server; });
}

nlohmann::json countOrNull(const std::optional<uint32_t>& n) {
  return n ? nlohmann::json(*n) : nlohmann::json(nullptr);
}

}  // namespace

ClusterSubsystem::ClusterSubsystem(platform::Platform& platform, std::string self, OnRole on_role,
                                   OnRoleChange on_role_change)
    : platform_(platform),
      self_(std::move(self)),
      on_role_(std::move(on_role)),
      on_role_change_(std::move(on_role_change)) {}

ClusterSubsystem::~ClusterSubsystem() { shutdown(); }

void ClusterSubsystem::log(LogLevel s, const std::string& line) { platform_.logger().log(s, line); }

Result<void> ClusterSubsystem::prepare(const config::Config& next, const config::Config* running) {
  (void)running;
  // The key files are read again at every reload: a rotation may change a file, not the config.
  auto keys = cluster::loadKeyRing(next, platform_.files());
  if (!keys) return fail(keys.error().code, "cluster keys: " + keys.error().message);
  prepared_keys_ = std::move(*keys);
  return {};
}

void ClusterSubsystem::configure(const config::Config& next, const config::Config* running,
                                 const config::ReloadDiff& diff) {
  (void)diff;
  config_ = next;
  if (running == nullptr) {
    holder_ = std::make_shared<resources::StateFileResource>(
        platform_.stateFiles(), next.daemon.state_dir + "/holder", self_);
  }
  if (node_ && prepared_keys_) node_->reconfigure(next, std::move(*prepared_keys_));
  prepared_keys_.reset();
}

std::vector<resources::HeldResource> ClusterSubsystem::held() {
  return {{resources::Stage::kState, holder_}};
}

void ClusterSubsystem::setResources(resources::ResourceChain::List resources) {
  if (node_) {
    node_->setResources(std::move(resources));
  } else {
    resources_ = std::move(resources);
  }
}

Result<void> ClusterSubsystem::start() {
  loop::Dispatcher& d = platform_.dispatcher();
  const config::Config& cfg = *config_;
  cluster::NodeEnv env{d,
                       platform_.children(),
                       [this](LogLevel s, const std::string& line) { log(s, line); },
                       [this, group = cfg.cluster.group](corosync::GroupBusListener& l) {
                         return platform_.openGroupBus(l, group);
                       },
                       {},
                       wire::makeIncarnation(platform_.wallClockMs(), platform_.random16()),
                       cfg.daemon.state_dir,
                       std::nullopt,
                       platform_.echoTransports(),
                       [this](uint16_t port, cluster::FrameLink::OnFrame on_frame) {
                         return platform_.openFrameLink(port, std::move(on_frame));
                       },
                       &platform_.stateFiles(),
                       &platform_.files(),
                       [this] { return platform_.wallClockMs(); },
                       on_role_,
                       drain_hooks_,
                       on_role_change_};
  if (auto nodes = platform_.readNodelist(); nodes) {
    env.nodelist = std::move(*nodes);
  } else {
    log(LogLevel::kWarning, "cannot read corosync's nodelist yet (" + nodes.error().message +
                                "); peers are reached at their node.address only");
  }
  auto node = cluster::ClusterNode::create(std::move(env), cfg, self_, std::move(resources_));
  resources_.clear();
  if (!node) return fail(node.error());
  node_ = std::move(*node);
  if (service_health_ != 1000) node_->setServiceHealth(service_health_);
  if (sync_state_) node_->setSyncState(*sync_state_);
  auto q = platform_.watchQuorum(*this);
  if (q) {
    quorum_ = std::move(*q);
  } else {
    log(LogLevel::kWarning, "cannot watch votequorum: " + q.error().message);
  }
  return node_->start();
}

void ClusterSubsystem::shutdown() {
  quorum_.reset();
  node_.reset();
}

void ClusterSubsystem::onQuorum(bool quorate) {
  if (node_) node_->onQuorum(quorate);
}

void ClusterSubsystem::onConnectionLost(const Error& cause) {
  const Millis hold = config_ ? config_->cluster.quorum_hold : Millis(0);
  log(LogLevel::kWarning, "lost votequorum: " + cause.message + "; its last verdict is held for " +
                              formatDuration(hold) + " (cluster.quorum_hold)");
  if (node_) node_->onQuorumLost();
}

nlohmann::json ClusterSubsystem::status() const {
  if (!node_) return nullptr;
  ipc::FrameStats stats;
  const wire::FrameCounters& c = node_->frameCounters();
  stats.accepted = c.accepted;
  for (wire::Rejection r : wire::kAllRejections)
    stats.rejected[std::string(wire::name(r))] = c.of(r);
  nlohmann::json j = ipc::statusJson(node_->clusterName(), node_->status(), stats);
  j["resources"] = node_->resourcesJson();
  return j;
}

void ClusterSubsystem::writeMetrics(metrics::Exposition& out) const {
  if (!node_) return;
  using metrics::labelSet;
  using metrics::Type;
  const election::CoreStatus st = node_->status();
  out.family("tandem_role", Type::kGauge, "1 for this director's role, 0 for the others");
  const std::string_view own = election::roleName(node_->role());
  for (size_t i = 0; i < election::kRoleCount; ++i) {
    const std::string_view role = election::roleName(static_cast<election::Role>(i));
    out.sample(labelSet({{"role", role}}), role == own ? 1.0 : 0.0);
  }
  out.family("tandem_node_role", Type::kGauge,
             "1 for each node's role as this director last heard it; all 0 for a node not heard");
  for (const election::NodeView& n : st.nodes) {
    for (size_t i = 0; i < election::kRoleCount; ++i) {
      const std::string_view role = election::roleName(static_cast<election::Role>(i));
      out.sample(labelSet({{"node", n.name}, {"role", role}}), n.role == role ? 1.0 : 0.0);
    }
  }
  out.gauge("tandem_epoch", "The election's epoch: it rises at every takeover in the cluster",
            static_cast<double>(st.epoch));
  out.gauge("tandem_quorum_known", "1 once votequorum has answered (or its answer is held)",
            st.quorate ? 1.0 : 0.0);
  out.gauge("tandem_quorate", "1 when the cluster is quorate, 0 when not or unknown",
            st.quorate.value_or(false) ? 1.0 : 0.0);
  out.family("tandem_peer_last_heartbeat_age_seconds", Type::kGauge,
             "Time since the last heartbeat from each other node", "seconds");
  for (const election::NodeView& n : st.nodes) {
    if (n.name == self_ || !n.last_heartbeat_ms) continue;
    out.sample(labelSet({{"node", n.name}}), static_cast<double>(*n.last_heartbeat_ms) / 1000.0);
  }
  const wire::FrameCounters& frames = node_->frameCounters();
  out.counter("tandem_frames_accepted", "Heartbeat and control frames accepted", frames.accepted);
  out.family("tandem_frames_rejected", Type::kCounter, "Frames rejected, by reason");
  for (wire::Rejection r : wire::kAllRejections) {
    out.sample(labelSet({{"reason", wire::name(r)}}), frames.of(r));
  }
  out.family("tandem_role_changes", Type::kCounter,
             "This director's role changes, by the event that made each");
  const auto& changes = node_->roleChanges();
  for (size_t i = 0; i < election::kRoleEventCount; ++i) {
    out.sample(labelSet({{"event", election::roleEventName(static_cast<election::RoleEvent>(i))}}),
               changes[i]);
  }
}

namespace {

Result<nlohmann::json> notJoined() {
  return fail(ErrorCode::kUnavailable, "this tandemd has not joined the cluster yet");
}

}  // namespace

Result<nlohmann::json> ClusterSubsystem::standby(const ipc::StandbyArgs& args) {
  if (!node_) return notJoined();
  if (args.node != self_) {
    return fail(ErrorCode::kInvalidArgument, "this is " + self_ + "; put " + args.node +
                                                 " in standby on " + args.node + " itself");
  }
  const std::optional<Millis> lifetime = lifetimeOf(args.lifetime_ms);
  platform_.logger().log(platform::LogLevel::kNotice,
                         std::string("operator standby ") + (args.on ? "on" : "off") + " node=" +
                             self_ + (lifetime ? " lifetime=" + formatDuration(*lifetime) : ""));
  node_->setStandby(args.on, lifetime);
  nlohmann::json answer{{"node", self_}, {"standby", args.on}};
  if (lifetime) answer["lifetime_ms"] = lifetime->count();
  return answer;
}

Result<nlohmann::json> ClusterSubsystem::move(const ipc::MoveArgs& args) {
  if (!node_) return notJoined();
  const std::string& target = args.target;
  if (!config_->findNode(target)) {
    return fail(ErrorCode::kInvalidArgument,
                "\"" + target + "\" is not a [[node]] in " + config_->source);
  }
  // A target that cannot take the services now would only leave a constraint behind that
  // pulls them there later, unasked: refused, and nothing changes.
  for (const election::NodeView& n : node_->status().nodes) {
    if (n.name != target) continue;
    std::string why;
    if (n.role == "LOST" || n.role == "UNKNOWN") why = "its tandemd is not heard";
    if (n.role == "FAULT") why = "it is FAULT";
    if (n.standby || n.role == "STANDBY") why = "it is in standby (`tandem node online` first)";
    if (why.empty() && n.health <= 0) why = "its health is 0";
    if (!why.empty()) {
      return fail(ErrorCode::kUnavailable,
                  target + " cannot take the services now: " + why + "; nothing was changed");
    }
  }
  const std::optional<Millis> lifetime = lifetimeOf(args.lifetime_ms);
  platform_.logger().log(platform::LogLevel::kNotice,
                         "operator move target=" + target +
                             (lifetime ? " lifetime=" + formatDuration(*lifetime) : ""));
  node_->move(target, lifetime);
  nlohmann::json answer{{"target", target}};
  if (lifetime) answer["lifetime_ms"] = lifetime->count();
  return answer;
}

Result<nlohmann::json> ClusterSubsystem::maintenance(bool on) {
  if (!node_) return notJoined();
  platform_.logger().log(platform::LogLevel::kNotice, std::string("operator maintenance ") +
                                                          (on ? "on" : "off") + " node=" + self_);
  node_->setMaintenance(on);
  return nlohmann::json{{"maintenance", on}};
}

Result<nlohmann::json> ClusterSubsystem::drain(const ipc::DrainArgs& args) {
  if (!node_) return notJoined();
  std::optional<DrainTarget> target;
  const config::VirtualServer* vs = nullptr;
  if (auto found = findService(*config_, args.service); found) {
    vs = *found;
    auto server = findServer(*vs, args.server);
    if (server) {
      target = drainTarget(*vs, *server);
    } else if (args.on) {
      return fail(server.error());
    }
  } else if (args.on) {
    return fail(found.error());
  }
  if (!target) {
    // Enabling a drain whose service or server a reload took away: found in the set by its
    // own words.
    for (const DrainTarget& t : node_->drainBook().targets()) {
      if (t.serviceText() == args.service && t.server.toString() == args.server) target = t;
    }
    if (!target) {
      return fail(ErrorCode::kInvalidArgument,
                  args.service + " " + args.server +
                      " is neither a configured real server nor drained (`tandem real list`)");
    }
  }
  auto changed = node_->setDrain(*target, args.on);
  if (!changed) return fail(changed.error());
  return nlohmann::json{{"service", target->serviceText()},
                        {"name", vs ? nlohmann::json(vs->name) : nlohmann::json(nullptr)},
                        {"server", target->server.toString()},
                        {"drained", args.on},
                        {"changed", *changed},
                        {"generation", node_->drainBook().generation()}};
}

Result<nlohmann::json> ClusterSubsystem::drains() const {
  if (!node_) return notJoined();
  const cluster::DrainView view = node_->drains();
  nlohmann::json drains = nlohmann::json::array();
  for (const DrainTarget& t : view.targets) {
    const config::VirtualServer* vs = serviceOf(*config_, t);
    drains.push_back({{"service", t.serviceText()},
                      {"name", vs ? nlohmann::json(vs->name) : nlohmann::json(nullptr)},
                      {"server", t.server.toString()},
                      {"configured", configured(vs, t)}});
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const cluster::DrainView::NodeReport& n : view.nodes) {
    nlohmann::json progress = nlohmann::json::array();
    for (const auto& [t, p] : n.progress) {
      progress.push_back({{"service", t.serviceText()},
                          {"server", t.server.toString()},
                          {"active_conns", countOrNull(p.active)},
                          {"templates", countOrNull(p.templates)}});
    }
    nodes.push_back(
        {{"name", n.name},
         {"role", n.role},
         {"report_age_ms", n.age_ms ? nlohmann::json(*n.age_ms) : nlohmann::json(nullptr)},
         {"progress", std::move(progress)}});
  }
  return nlohmann::json{
      {"generation", view.generation}, {"drains", std::move(drains)}, {"nodes", std::move(nodes)}};
}

Result<nlohmann::json> ClusterSubsystem::clear() {
  if (!node_) return notJoined();
  node_->clearFailures();
  node_->move("");
  return nlohmann::json{{"cleared", true}};
}

void ClusterSubsystem::setSyncState(const SyncReport& sync) {
  sync_state_ = sync;
  if (node_) node_->setSyncState(sync);
}

void ClusterSubsystem::setServiceHealth(int permille) {
  service_health_ = permille;
  if (node_) node_->setServiceHealth(permille);
}

}  // namespace tandem::director
