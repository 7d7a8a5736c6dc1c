#include "cluster/cluster_node.h"

#include <openssl/crypto.h>
#include <unistd.h>

#include <charconv>
#include <sstream>
#include <string_view>

#include "cluster/frame_apply.h"
#include "cluster/udp_link.h"
#include "wire/incarnation.h"

namespace tandem::cluster {

namespace {

// "ACTIVE 7": the role and epoch a restarted daemon finds under /run.
election::Startup readStartup(const StateFiles& files, const std::string& role_file) {
  election::Startup st;
  auto text = files.read(role_file);
  if (!text || !*text) return st;
  std::istringstream in(**text);
  std::string role;
  uint64_t epoch = 0;
  if (in >> role >> epoch) {
    st.was_active = role == "ACTIVE" || role == "TAKING_OVER" || role == "RELEASING";
    st.epoch = epoch;
  }
  return st;
}

// "on 1764792000123": the maintenance mode and its generation, kept beside the role so that a
// restarted daemon in maintenance resumes what it held instead of acting on it. Anything else
// reads as never set: the peers' heartbeats then say what the cluster decided.
void readMaintenance(const StateFiles& files, const std::string& path, election::Startup& st,
                     const LogSink& log) {
  auto text = files.read(path);
  if (!text || !*text) return;
  std::istringstream in(**text);
  std::string state;
  std::string digits;
  uint64_t generation = 0;
  // The generation is wall-clock ms: digits only (">>" would read "-1" as 2^64-1, which no
  // later request could beat), and not beyond the year 9999.
  constexpr uint64_t kLatest = 253402300799999;
  if (in >> state >> digits && (state == "on" || state == "off") && !digits.empty() &&
      digits.size() <= 15 && digits.find_first_not_of("0123456789") == std::string::npos &&
      (generation = std::stoull(digits)) > 0 && generation <= kLatest) {
    st.maintenance = state == "on";
    st.maintenance_generation = generation;
    return;
  }
  log(LogLevel::kWarning, path + ": not \"on|off GENERATION\"; maintenance mode is taken from " +
                              "the peers' heartbeats");
}

// STATE_DIR/drains (DrainBook::serialize). A file that does not read is logged, naming the
// line, and the drains are then taken from the peers' heartbeats.
DrainBook readDrains(const StateFiles& files, const std::string& path, const LogSink& log) {
  auto text = files.read(path);
  if (!text) {
    log(LogLevel::kWarning, "cannot read " + path + ": " + text.error().message +
                                "; the drains are taken from the peers' heartbeats");
    return {};
  }
  if (!*text) return {};
  auto book = DrainBook::parse(**text);
  if (!book) {
    log(LogLevel::kWarning, path + ": " + book.error().message +
                                "; the drains are taken from the peers' heartbeats (`tandem real "
                                "drain` sets them again)");
    return {};
  }
  return std::move(*book);
}

// This run's incarnation, past the last run's (wire::nextIncarnation), recorded in
// STATE_DIR/incarnation before the first frame is sealed. Any fault here costs only the
// protection against a clock stepped back: it is logged, and the clock's incarnation is used.
uint64_t persistIncarnation(StateFiles& files, const std::string& dir, uint64_t from_clock,
                            const LogSink& log) {
  const std::string path = dir + "/incarnation";
  std::optional<uint64_t> last;
  if (auto text = files.read(path); !text) {
    log(LogLevel::kWarning, "cannot read " + path + " (" + text.error().message +
                                "): this run's incarnation follows the clock alone");
  } else if (*text) {
    std::string_view digits = **text;
    const size_t last_digit = digits.find_last_not_of(" \t\r\n");
    digits = last_digit == std::string_view::npos ? std::string_view()
                                                  : digits.substr(0, last_digit + 1);
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty()) {
      last = value;
    } else {
      log(LogLevel::kWarning, path + ": \"" + std::string(digits.substr(0, 40)) +
                                  "\" is not an incarnation; ignored, and written anew");
    }
  }
  const uint64_t incarnation = wire::nextIncarnation(from_clock, last);
  if (incarnation != from_clock) {
    log(LogLevel::kWarning,
        "the clock is behind the last run's start (incarnation " + std::to_string(*last) +
            ", this clock's " + std::to_string(from_clock) +
            "): this run counts on from the last one, so that its peers still hear it");
  }
  if (auto made = files.makeDirectory(dir); !made) {
    log(LogLevel::kWarning, "cannot create the state directory: " + made.error().message);
  }
  if (auto written = files.write(path, std::to_string(incarnation) + "\n"); !written) {
    log(LogLevel::kWarning, "cannot record the incarnation in " + path + " (" +
                                written.error().message +
                                "): should the clock step back before the next start, the "
                                "peers would drop that run's frames as stale_incarnation");
  }
  return incarnation;
}

}  // namespace

Result<wire::KeyRing> loadKeyRing(const config::Config& cfg, const config::FileSystem& fs) {
  wire::KeyRing ring;
  for (const config::AuthKey& k : cfg.cluster.keys) {
    if (!k.credential.empty() && fs.credentialsDirectory().empty()) {
      return fail(ErrorCode::kNotFound,
                  "key " + std::to_string(k.id) + ": the systemd credential \"" + k.credential +
                      "\" is not there ($CREDENTIALS_DIRECTORY is not set): start tandemd "
                      "from its unit with LoadCredential=" +
                      k.credential + " or LoadCredentialEncrypted=" + k.credential +
                      ", or give the key a file");
    }
    std::string path = cfg.keyPath(k, fs.credentialsDirectory());
    auto text = fs.readSecret(path, wire::KeyRing::kMinSecretBytes, wire::KeyRing::kMaxSecretBytes);
    if (!text)
      return fail(text.error().code, "key " + std::to_string(k.id) + ": " + text.error().message);
    auto added = ring.add(static_cast<uint16_t>(k.id), tandem::asBytes(*text));
    // OPENSSL_cleanse, not std::fill: a store to memory about to be freed may be optimised away.
    OPENSSL_cleanse(text->data(), text->size());
    if (!added)
      return fail(added.error().code,
                  "key " + std::to_string(k.id) + " (" + path + "): " + added.error().message);
  }
  if (auto a = ring.setActive(static_cast<uint16_t>(cfg.cluster.active_key)); !a)
    return fail(a.error());
  return ring;
}

election::CoreConfig coreConfig(const config::Config& cfg, const std::string& self) {
  election::CoreConfig cc;
  cc.self = self;
  if (const config::Node* me = cfg.findNode(self)) cc.priority = me->priority;
  for (const auto& n : cfg.nodes) {
    if (n.name != self) cc.peers[n.name] = n.priority;
  }
  cc.heartbeat_interval = cfg.cluster.heartbeat_interval;
  cc.dead_time = cfg.cluster.dead_time;
  cc.policy = election::Policy{cfg.cluster.failback,
                               cfg.cluster.failback_delay,
                               election::healthSettle(cfg),
                               cfg.sync.enabled,
                               cfg.sync.settle,
                               cfg.sync.min_share,
                               cfg.sync.max_wait};
  cc.fencing = cfg.cluster.fence.command.has_value();
  cc.ignore_quorum = cfg.cluster.no_quorum_policy == config::NoQuorumPolicy::kIgnore;
  cc.quorum_hold = cfg.cluster.quorum_hold;
  return cc;
}

Result<std::unique_ptr<ClusterNode>> ClusterNode::create(NodeEnv env, const config::Config& cfg,
                                                         std::string self,
                                                         resources::ResourceChain::List resources) {
  const config::Node* me = cfg.findNode(self);
  if (!me) {
    return fail(ErrorCode::kInvalidArgument,
                "this node is \"" + self + "\", which is not a [[node]] in " + cfg.source +
                    "; name the node as corosync.conf does, or start tandemd with --node");
  }
  static PosixStateFiles posix_state;
  static config::PosixFileSystem posix_files;
  if (env.state_files == nullptr) env.state_files = &posix_state;
  if (env.files == nullptr) env.files = &posix_files;
  auto keys = loadKeyRing(cfg, *env.files);
  if (!keys) return fail(keys.error());
  election::Startup st = readStartup(*env.state_files, env.state_dir + "/role");
  readMaintenance(*env.state_files, env.state_dir + "/maintenance", st, env.log);
  env.incarnation = persistIncarnation(*env.state_files, env.state_dir, env.incarnation, env.log);
  for (const auto& r : resources) st.resources_present = st.resources_present || r->present();

  std::unique_ptr<ClusterNode> node(new ClusterNode(std::move(env), cfg, self, std::move(*keys),
                                                    coreConfig(cfg, self), st,
                                                    std::move(resources)));
  uint16_t port = node->env_.udp_port.value_or(cfg.cluster.heartbeat_port);
  ClusterNode* raw = node.get();
  FrameLink::OnFrame on_frame = [raw](std::span<const uint8_t> f, const IpAddress& from) {
    auto it = raw->udp_senders_.find(from);
    raw->onFrame(f, "udp", it == raw->udp_senders_.end() ? std::string() : it->second);
  };
  auto udp = node->env_.make_link ? node->env_.make_link(port, std::move(on_frame))
                                  : [&]() -> Result<std::unique_ptr<FrameLink>> {
    auto u = UdpLink::open(node->dispatcher_, port, std::move(on_frame));
    if (!u) return fail(u.error());
    return std::unique_ptr<FrameLink>(std::move(*u));
  }();
  if (!udp) return fail(udp.error());
  node->udp_ = std::move(*udp);
  node->applyPeers(cfg);
  node->resuming_ = st.was_active && st.resources_present;
  node->drains_ =
      readDrains(*node->env_.state_files, node->env_.state_dir + "/drains", node->env_.log);
  if (!node->drains_.targets().empty()) {
    node->env_.log(LogLevel::kNotice, "drains kept from the last run: " +
                                          std::to_string(node->drains_.targets().size()));
  }
  if (node->env_.drains.apply) node->env_.drains.apply(node->drains_.targets());
  if (auto t = node->openTiebreaker(cfg); !t) return fail(t.error());
  return node;
}

void ClusterNode::applyPeers(const config::Config& cfg) {
  const uint16_t port = udp_->port();
  std::vector<Endpoint> peers;
  peer_nodeids_.clear();
  udp_senders_.clear();
  for (const auto& n : cfg.nodes) {
    if (n.name == self_) continue;
    std::optional<IpAddress> addr = n.address;
    for (const auto& e : env_.nodelist) {
      if (e.name == n.name) {
        peer_nodeids_[n.name] = e.nodeid;
        if (!addr) addr = IpAddress::parse(e.ring0_addr);
      }
    }
    if (!addr) {
      env_.log(LogLevel::kWarning,
               "no address for peer node=" + n.name +
                   "; fast heartbeats to it are off, only CPG carries them (set node.address)");
      continue;
    }
    peers.push_back(Endpoint{*addr, port});
    udp_senders_[*addr] = n.name;
  }
  udp_->setPeers(std::move(peers));
  wire::NodeSet names;
  for (const auto& n : cfg.nodes) {
    if (n.name != self_) names.insert(n.name);
  }
  receiver_.setPeers(std::move(names));
}

Result<void> ClusterNode::openTiebreaker(const config::Config& cfg) {
  pinger_.reset();
  if (cfg.cluster.tiebreaker.targets.empty()) return {};
  if (!env_.make_echo) {
    return fail(ErrorCode::kInvalidArgument,
                "[cluster.tiebreaker] is configured but this tandemd has no echo transport");
  }
  auto pinger = ping::Pinger::create(
      dispatcher_, cfg.cluster.tiebreaker, env_.incarnation, env_.make_echo,
      [this](const ping::ReachChange& c) { onReach(c); },
      // A peer on the same link is heard again within dead_time; leaving FAULT before that
      // would take over beside it.
      cfg.cluster.dead_time);
  if (!pinger) return fail(pinger.error());
  pinger_ = std::move(*pinger);
  return {};
}

void ClusterNode::reconfigure(const config::Config& cfg, wire::KeyRing keys) {
  const config::Cluster old = cluster_cfg_;
  keys_ = std::move(keys);
  cluster_cfg_ = cfg.cluster;
  applyPeers(cfg);
  if (!(old.tiebreaker == cfg.cluster.tiebreaker)) {
    if (auto t = openTiebreaker(cfg); !t) {
      env_.log(LogLevel::kError, "tiebreaker not started after reload: " + t.error().message);
      setTiebreakerOk(true);
    } else if (pinger_) {
      // As at start: unproven until the first round is decided.
      setTiebreakerOk(false);
      pinger_->start();
    } else {
      setTiebreakerOk(true);
    }
  }
  handle(core_.onReconfigure(now(), coreConfig(cfg, self_)));
  // New timers take effect from the next beat; a shorter one should not wait for the old.
  if (old.heartbeat_interval != cluster_cfg_.heartbeat_interval) beat_timer_->arm(Millis(0));
  if (old.group_heartbeat_interval != cluster_cfg_.group_heartbeat_interval) {
    group_timer_->arm(Millis(0));
  }
}

void ClusterNode::setResources(resources::ResourceChain::List resources) {
  chain_.replace(std::move(resources), [this](Result<void> r) {
    if (!r) handle(core_.onResourceFailed(now(), r.error().message));
  });
}

ClusterNode::ClusterNode(NodeEnv env, const config::Config& cfg, std::string self,
                         wire::KeyRing keys, election::CoreConfig core_cfg,
                         election::Startup startup, resources::ResourceChain::List resources)
    : dispatcher_(env.dispatcher),
      env_(std::move(env)),
      cluster_(cfg.cluster.name),
      self_(std::move(self)),
      cluster_cfg_(cfg.cluster),
      keys_(std::move(keys)),
      sealer_(cluster_, self_, env_.incarnation),
      receiver_(cluster_,
                [&] {
                  wire::NodeSet peers;
                  for (const auto& n : cfg.nodes) {
                    if (n.name != self_) peers.insert(n.name);
                  }
                  return peers;
                }()),
      core_(std::move(core_cfg), env_.dispatcher.now(), startup),
      chain_(env_.dispatcher, std::move(resources)) {
  beat_timer_ = dispatcher_.createTimer([this] {
    sendHeartbeat(true, false);
    beat_timer_->arm(cluster_cfg_.heartbeat_interval);
  });
  group_timer_ = dispatcher_.createTimer([this] {
    sendHeartbeat(false, true);
    group_timer_->arm(cluster_cfg_.group_heartbeat_interval);
  });
  deadline_timer_ = dispatcher_.createTimer([this] {
    // A deadline is most often a peer's dead_time. Read what has arrived first: after a stall
    // the loop may run this timer before the sockets' turn, with the peer's frames waiting.
    udp_->drain();
    if (bus_) bus_->drain();
    handle(core_.onTick(now()));
  });
  monitor_timer_ = dispatcher_.createTimer([this] {
    if (core_.role() == election::Role::kActive) {
      chain_.monitorAll([this](Result<void> r) {
        if (!r) handle(core_.onResourceFailed(now(), r.error().message));
      });
    }
    monitor_timer_->arm(Millis(2000));
  });
}

ClusterNode::~ClusterNode() {
  pinger_.reset();
  fence_.reset();
  bus_.reset();
}

Result<void> ClusterNode::start() {
  if (auto made = env_.state_files->makeDirectory(env_.state_dir); !made) {
    env_.log(LogLevel::kWarning, "cannot create the state directory: " + made.error().message);
  }
  auto bus = env_.make_bus(*this);
  if (!bus) return fail(bus.error());
  bus_ = std::move(*bus);
  env_.log(LogLevel::kNotice, "cluster node starting node=" + self_ + " cluster=" + cluster_ +
                                  " incarnation=" + std::to_string(env_.incarnation) +
                                  " udp_port=" + std::to_string(udp_->port()));
  if (pinger_) {
    // Until the first round is decided a node may not become ACTIVE on an unproven link: the
    // tiebreaker counts as lost. The round goes out at once and a LAN target answers in well
    // under a millisecond, so a normal start is not delayed. A daemon restarted while ACTIVE
    // with its resources in place is the exception: it keeps them while the round is out
    // (dropping the VIPs over a restart would be an outage of its own), and gives them up if
    // no target answers within the timeout.
    if (!resuming_) {
      env_.log(LogLevel::kNotice, "tiebreaker pending: waiting for an answer from " +
                                      ping::joinAddresses(pinger_->targets()) +
                                      " before this node may become ACTIVE");
      setTiebreakerOk(false);
    }
    pinger_->start();
  }
  handle(core_.onTick(now()));
  beat_timer_->arm(Millis(0));
  group_timer_->arm(Millis(0));
  monitor_timer_->arm(Millis(2000));
  return Result<void>();
}

void ClusterNode::onQuorum(bool quorate) { handle(core_.onQuorum(now(), quorate)); }
void ClusterNode::onQuorumLost() { handle(core_.onQuorumLost(now())); }
void ClusterNode::setStandby(bool on, std::optional<Millis> lifetime) {
  handle(core_.onStandby(now(), on, lifetime));
}
void ClusterNode::clearFailures() { handle(core_.onClearFailures(now())); }

uint64_t ClusterNode::nextGeneration(uint64_t last) const {
  // The wall clock orders requests made on different nodes; past the last one breaks ties.
  const uint64_t wall =
      env_.wall_clock
          ? env_.wall_clock()
          : static_cast<uint64_t>(std::chrono::duration_cast<Millis>(
                                      std::chrono::system_clock::now().time_since_epoch())
                                      .count());
  return std::max(last + 1, wall);
}

void ClusterNode::move(const std::string& target, std::optional<Millis> lifetime) {
  move_generation_ =
      std::max(nextGeneration(move_generation_), core_.heartbeat().move_generation + 1);
  handle(core_.onMove(now(), target, move_generation_, lifetime));
}

void ClusterNode::setMaintenance(bool on) {
  handle(core_.onMaintenance(now(), on, nextGeneration(core_.heartbeat().maintenance_generation)));
}

Result<bool> ClusterNode::setDrain(const DrainTarget& t, bool on) {
  auto changed = drains_.set(t, on, nextGeneration(drains_.generation()));
  if (!changed) return fail(changed.error());
  if (*changed) drainsChanged(std::string(on ? "drained " : "enabled ") + t.toString());
  return *changed;
}

void ClusterNode::drainsChanged(const std::string& why) {
  env_.log(LogLevel::kNotice, why + " " +
                                  kv("drains", static_cast<uint64_t>(drains_.targets().size())) +
                                  " " + kv("generation", drains_.generation()));
  if (auto r = env_.state_files->write(env_.state_dir + "/drains", drains_.serialize()); !r) {
    env_.log(LogLevel::kWarning, "cannot keep the drains for a restart: " + r.error().message);
  }
  if (env_.drains.apply) env_.drains.apply(drains_.targets());
  // Peers learn it from the next heartbeat; sent now, they apply it at once.
  sendHeartbeat(true, true);
}

void ClusterNode::onPeerDrains(const std::string& sender, const wire::Heartbeat& hb) {
  PeerDrains& p = peer_drains_[sender];
  p.role = std::string(wire::roleName(hb.role));
  p.at = now();
  p.progress.clear();
  std::vector<DrainTarget> targets;
  for (const wire::DrainReport& d : hb.drains) {
    p.progress[d.target] = d.progress;
    targets.push_back(d.target);
  }
  if (hb.drain_generation == 0) return;
  if (drains_.adopt(hb.drain_generation, std::move(targets))) {
    drainsChanged("drains from " + sender);
  }
}

DrainView ClusterNode::drains() const {
  DrainView v;
  v.generation = drains_.generation();
  v.targets = drains_.targets();
  DrainView::NodeReport self{
      self_, std::string(election::roleName(core_.role())), std::nullopt, {}};
  for (const DrainTarget& t : v.targets) {
    self.progress[t] = env_.drains.progress ? env_.drains.progress(t) : DrainProgress{};
  }
  v.nodes.push_back(std::move(self));
  for (const auto& [name, p] : peer_drains_) {
    v.nodes.push_back(
        {name, p.role, std::chrono::duration_cast<Millis>(now() - p.at).count(), p.progress});
  }
  return v;
}

wire::Heartbeat ClusterNode::heartbeat() const {
  wire::Heartbeat hb = core_.heartbeat();
  hb.drain_generation = drains_.generation();
  for (const DrainTarget& t : drains_.targets()) {
    hb.drains.push_back({t, env_.drains.progress ? env_.drains.progress(t) : DrainProgress{}});
  }
  return hb;
}

nlohmann::json ClusterNode::resourcesJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : chain_.resources()) {
    nlohmann::json entry = {{"name", std::string(r->name())}, {"present", r->lastSeenPresent()}};
    entry.update(r->describe());
    out.push_back(std::move(entry));
  }
  return out;
}

election::CoreStatus ClusterNode::status() const { return core_.status(dispatcher_.now()); }

void ClusterNode::handle(const election::Actions& actions) {
  using K = election::Action::Kind;
  for (const election::Action& a : actions) {
    switch (a.kind) {
      case K::kStartResources:
        chain_.startAll([this](Result<void> r) {
          handle(r ? core_.onResourcesStarted(now())
                   : core_.onResourceFailed(now(), r.error().message));
        });
        break;
      case K::kStopResources:
        chain_.stopAll([this](Result<void> r) {
          handle(r ? core_.onResourcesStopped(now())
                   : core_.onResourceFailed(now(), r.error().message));
        });
        break;
      case K::kRunFence:
        runFence(a.text);
        break;
      case K::kCancelFence:
        fence_.reset();
        break;
      case K::kSendHeartbeat:
        sendHeartbeat(true, true);
        break;
      case K::kSendRelease:
        sendRelease(a.text);
        break;
      case K::kReannounce:
        env_.log(LogLevel::kNotice,
                 "re-announcing resources after a conflict node=" + self_ + " peer=" + a.text);
        chain_.reannounceAll();
        break;
      case K::kPersistRole:
        persistRole(a.text);
        break;
      case K::kPersistMaintenance:
        if (auto r = env_.state_files->write(env_.state_dir + "/maintenance", a.text + "\n"); !r) {
          env_.log(LogLevel::kWarning, "cannot persist maintenance mode: " + r.error().message);
        }
        break;
      case K::kLog:
        env_.log(LogLevel::kNotice, a.text);
        break;
      case K::kAlarm:
        env_.log(LogLevel::kError, "ALARM node=" + self_ + " " + a.text);
        break;
      case K::kRoleChanged:
        if (env_.on_role_change && a.change) env_.on_role_change(*a.change);
        break;
    }
  }
  armDeadline();
  // Once per role reached: a nested handle() (a resource that answered at once) reports first.
  if (core_.role() != reported_role_) {
    reported_role_ = core_.role();
    if (env_.on_role) env_.on_role(reported_role_);
  }
}

void ClusterNode::armDeadline() {
  auto next = core_.nextDeadline();
  if (!next) {
    deadline_timer_->cancel();
    return;
  }
  auto delay = std::chrono::duration_cast<Millis>(*next - now());
  // +1 ms: a deadline is "at or after"; a timer a hair early would only re-arm for zero.
  deadline_timer_->arm(std::max(Millis(0), delay) + Millis(1));
}

void ClusterNode::sendHeartbeat(bool udp, bool group) {
  const wire::Heartbeat hb = heartbeat();
  // Separate seals: each copy has its own sequence number, so neither looks like a replay.
  if (udp) {
    auto bytes = sealer_.sealHeartbeat(hb, keys_);
    if (bytes) udp_->send(*bytes);
  }
  if (group && bus_ && bus_->connected()) {
    auto bytes = sealer_.sealHeartbeat(hb, keys_);
    if (bytes) (void)bus_->send(*bytes);
  }
}

void ClusterNode::sendRelease(const std::string& target) {
  wire::Release rel{wire::ReleaseKind::kReleased, target, core_.heartbeat().epoch};
  auto udp_copy = sealer_.sealRelease(rel, keys_);
  if (udp_copy) udp_->send(*udp_copy);
  if (bus_ && bus_->connected()) {
    auto group_copy = sealer_.sealRelease(rel, keys_);
    if (group_copy) (void)bus_->send(*group_copy);
  }
}

void ClusterNode::onFrame(std::span<const uint8_t> bytes, const std::string& path,
                          const std::optional<std::string>& came_from) {
  wire::Checked<wire::Message> m = receiver_.receive(bytes, keys_, came_from);
  if (!m) {
    std::string line =
        "frame rejected path=" + path + " reason=" + std::string(wire::name(m.error()));
    if (m.error() == wire::Rejection::kSenderMismatch) {
      line += " came_from=" + (came_from->empty() ? "an address of no peer" : *came_from);
    }
    env_.log(LogLevel::kDebug, line);
    return;
  }
  if (const auto* hb = std::get_if<wire::Heartbeat>(&m->body)) onPeerDrains(m->frame.sender, *hb);
  handle(applyMessage(core_, now(), *m));
}

void ClusterNode::runFence(const std::string& peer) {
  const config::Fence& f = cluster_cfg_.fence;
  if (!f.command) {
    handle(core_.onFenceResult(now(), false, "no fence command is configured"));
    return;
  }
  env_.log(LogLevel::kWarning, "fencing peer=" + peer + " before taking over from it");
  process::CommandLine cmd{f.command->argv, f.command->via_shell};
  auto h = env_.children.run(cmd, {"TANDEM_PEER=" + peer, "TANDEM_CLUSTER=" + cluster_}, f.timeout,
                             [this, peer](process::ChildResult r) {
                               env_.log(r.ok() ? LogLevel::kNotice : LogLevel::kError,
                                        "fence peer=" + peer + " result=\"" + r.describe() +
                                            "\" output=\"" + r.output.substr(0, 200) + "\"");
                               handle(core_.onFenceResult(now(), r.ok(), r.describe()));
                             });
  if (!h) {
    handle(core_.onFenceResult(now(), false, h.error().message));
    return;
  }
  fence_ = std::move(*h);
}

void ClusterNode::persistRole(const std::string& role) {
  auto r = env_.state_files->write(env_.state_dir + "/role",
                                   role + " " + std::to_string(core_.heartbeat().epoch) + "\n");
  if (!r) env_.log(LogLevel::kWarning, "cannot persist the role: " + r.error().message);
}

std::optional<ping::Reach> ClusterNode::tiebreaker() const {
  if (!pinger_) return std::nullopt;
  return pinger_->state();
}

void ClusterNode::onReach(const ping::ReachChange& change) {
  bool ok = change.to == ping::Reach::kReached;
  if (!ok) {
    env_.log(LogLevel::kWarning, "tiebreaker lost: " + change.detail + " node=" + self_ +
                                     " role=" + std::string(election::roleName(core_.role())));
  } else {
    env_.log(LogLevel::kNotice,
             std::string(change.from == ping::Reach::kLost ? "tiebreaker regained: "
                                                           : "tiebreaker reached: ") +
                 change.detail + " node=" + self_);
  }
  setTiebreakerOk(ok);
}

void ClusterNode::setTiebreakerOk(bool ok) {
  tiebreaker_ok_ = ok;
  pushHealth();
}

void ClusterNode::setServiceHealth(int permille) {
  service_health_ = permille;
  pushHealth();
}

void ClusterNode::setSyncState(const SyncReport& sync) { handle(core_.onSyncState(now(), sync)); }

void ClusterNode::pushHealth() {
  // 0 while the tiebreaker fails (not eligible); otherwise what the real-server checks see.
  handle(core_.onLocalHealth(now(), tiebreaker_ok_ ? service_health_ : 0, tiebreaker_ok_));
}

std::optional<std::string> ClusterNode::cpgSender(uint32_t nodeid) const {
  for (const auto& [name, id] : peer_nodeids_) {
    if (id == nodeid) return name;
  }
  // A nodeid that is no peer's: no peer can speak from it, when the nodelist names them all.
  // Where it does not (names that differ from corosync's), the path cannot tell.
  if (peer_nodeids_.size() == receiver_.peers().size()) return std::string();
  return std::nullopt;
}

std::optional<std::string> ClusterNode::nameOf(uint32_t nodeid) const {
  return corosync::nodeNameFor(env_.nodelist, nodeid);
}

void ClusterNode::onMessage(uint32_t nodeid, uint32_t pid, std::span<const uint8_t> bytes) {
  if (bus_ && bus_->localNodeId() == nodeid && pid == static_cast<uint32_t>(::getpid())) return;
  onFrame(bytes, "cpg", cpgSender(nodeid));
}

void ClusterNode::onGroupChange(const corosync::GroupChange& change) {
  for (const auto& left : change.left) {
    auto name = nameOf(left.member.nodeid);
    if (!name || *name == self_) continue;
    // A new daemon on that node may already be in the group under another pid.
    bool still_there = false;
    for (const auto& m : change.members)
      still_there = still_there || m.nodeid == left.member.nodeid;
    if (still_there) continue;
    switch (corosync::departureOf(left.reason)) {
      case corosync::Departure::kDaemonOnly:
        handle(core_.onDaemonLeft(now(), *name));
        break;
      case corosync::Departure::kWholeNode:
        handle(core_.onNodeLeft(now(), *name));
        break;
      case corosync::Departure::kUnknown:
        break;
    }
  }
}

void ClusterNode::onMembership(const corosync::RingMembership& ring) {
  for (const auto& [name, nodeid] : peer_nodeids_) {
    if (std::find(ring.nodeids.begin(), ring.nodeids.end(), nodeid) == ring.nodeids.end()) {
      handle(core_.onNodeLeft(now(), name));
    }
  }
}

void ClusterNode::onConnected() {
  env_.log(LogLevel::kNotice,
           "joined the corosync group node=" + self_ + " group=" + cluster_cfg_.group);
  sendHeartbeat(false, true);
}

void ClusterNode::onConnectionLost(const Error& cause, size_t discarded) {
  // The node keeps its role: the UDP path still carries heartbeats, and the kernel still
  // holds the resources. Reconnecting is the bus's job.
  env_.log(LogLevel::kWarning, "lost corosync node=" + self_ + " role=" +
                                   std::string(election::roleName(core_.role())) + " cause=\"" +
                                   cause.message + "\" discarded=" + std::to_string(discarded) +
                                   "; keeping the role, heartbeats continue over UDP");
}

void ClusterNode::onConnectFailed(const Error& cause, Millis retry_in) {
  env_.log(LogLevel::kInfo, "corosync not reachable cause=\"" + cause.message +
                                "\" retry_ms=" + std::to_string(retry_in.count()));
}

}  // namespace tandem::cluster
