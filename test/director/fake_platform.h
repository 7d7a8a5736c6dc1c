#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/fake_echo.h"
#include "fakes/fake_file_system.h"
#include "fakes/fake_logger.h"
#include "fakes/fake_notifier.h"
#include "fakes/sim_dispatcher.h"
#include "platform/platform.h"
#include "resources/fake_address_table.h"
#include "resources/fake_checker.h"
#include "resources/fake_children.h"
#include "resources/fake_ipvs_kernel.h"
#include "resources/fake_packet_socket.h"
#include "resources/fake_route_table.h"
#include "resources/fake_sync_kernel.h"
#include "resources/fake_sync_tap.h"
#include "resources/fake_sysctl.h"

// Whole directors in one process: a FakeWorld is the network and the Corosync ring between
// them (frames and CPG messages carried on the simulated dispatcher, cut per node); each
// FakePlatform is one director's operating system (its own log, service manager, files, state
// directory, address table, packet sockets, IPVS table and signals).
namespace tandem::fakes {

// State files in memory.
class FakeStateFiles final : public StateFiles {
 public:
  std::function<void(const std::string&)> on_change;  // "holder written", "holder removed"

  Result<void> makeDirectory(const std::string& path) override {
    dirs.insert(path);
    return {};
  }
  Result<void> write(const std::string& path, const std::string& contents) override {
    files[path] = contents;
    if (on_change && path.ends_with("/holder")) on_change("holder written");
    return {};
  }
  Result<std::optional<std::string>> read(const std::string& path) const override {
    auto it = files.find(path);
    if (it == files.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Result<void> remove(const std::string& path) override {
    if (files.erase(path) && on_change && path.ends_with("/holder")) on_change("holder removed");
    return {};
  }
  bool exists(const std::string& path) const override { return files.count(path) > 0; }

  std::map<std::string, std::string> files;
  std::set<std::string> dirs;
};

// One node's view of the shared simulated loop: its timers and fds are the shared ones, but
// its signals and its stop() are its own, as they would be in a process of its own.
class NodeDispatcher final : public loop::Dispatcher {
 public:
  explicit NodeDispatcher(SimDispatcher& sim) : sim_(sim) {}
  loop::MonoTime now() const override { return sim_.now(); }
  std::unique_ptr<loop::Timer> createTimer(std::function<void()> on_fire) override {
    return sim_.createTimer(std::move(on_fire));
  }
  Result<std::unique_ptr<loop::FdWatch>> watchFd(
      int fd, loop::FdEvents interest, std::function<void(loop::FdEvents)> on_ready) override {
    return sim_.watchFd(fd, interest, std::move(on_ready));
  }
  Result<std::unique_ptr<loop::SignalWatch>> onSignal(loop::Signal sig,
                                                      std::function<void()> on_signal) override {
    if (signals_.count(sig)) return fail(ErrorCode::kAlreadyExists, "signal already watched");
    signals_[sig] = std::move(on_signal);
    return std::unique_ptr<loop::SignalWatch>(std::make_unique<Watch>(*this, sig));
  }
  void run() override {}
  void stop() override { stopped_ = true; }

  bool deliver(loop::Signal sig) {
    auto it = signals_.find(sig);
    if (it == signals_.end()) return false;
    auto handler = it->second;
    handler();
    return true;
  }
  bool watchesSignal(loop::Signal sig) const { return signals_.count(sig) > 0; }
  bool stopped() const { return stopped_; }

 private:
  class Watch final : public loop::SignalWatch {
   public:
    Watch(NodeDispatcher& d, loop::Signal sig) : d_(d), sig_(sig) {}
    ~Watch() override { d_.signals_.erase(sig_); }

   private:
    NodeDispatcher& d_;
    loop::Signal sig_;
  };
  SimDispatcher& sim_;
  std::map<loop::Signal, std::function<void()>> signals_;
  bool stopped_ = false;
};

// The network and the ring. A node is cut off as a whole (its link, as a pulled cable would)
// or a pair is partitioned; frames and CPG messages are delivered on the loop, in order.
class FakeWorld {
 public:
  explicit FakeWorld(SimDispatcher& sim) : sim_(sim), echo_(sim, Millis(1)), checks_(sim) {
    timer_ = sim_.createTimer([this] { drain(); });
  }

  // The tiebreaker's target (the gateway): a cut-off node does not reach it either.
  FakeEchoNet& echo() { return echo_; }
  // The real servers every director's health checks probe (one network for all).
  CheckWorld& checks() { return checks_; }

  SimDispatcher& sim() { return sim_; }

  void cut(const std::string& node, bool on) {
    if (on) {
      cut_.insert(node);
      echo_.cut(node);
    } else {
      cut_.erase(node);
      echo_.restore(node);
    }
  }
  void partition(const std::string& a, const std::string& b, bool on) {
    auto key = std::minmax(a, b);
    if (on) {
      partitions_.insert(key);
    } else {
      partitions_.erase(key);
    }
  }
  // UDP only (a firewall rule between the directors), CPG still carries heartbeats.
  void blockUdp(bool on) { udp_blocked_ = on; }
  // A node whose loop has fallen behind (its CPU starved): what reaches it waits in its
  // sockets, read only when it drains them itself (FrameLink/GroupBus::drain), or when the
  // stall ends.
  void stall(const std::string& node, bool on) {
    if (on) {
      stalled_.insert(node);
      return;
    }
    stalled_.erase(node);
    deliverWaiting(node);
  }
  bool reaches(const std::string& a, const std::string& b) const {
    return !cut_.count(a) && !cut_.count(b) && !partitions_.count(std::minmax(a, b));
  }

  // Every frame any node sent over the group, raw, for a test to read (e.g. the key id).
  std::vector<std::vector<uint8_t>> group_log;
  // What the directors did to their kernels, in order: "a: holder written", "a: add
  // 198.51.100.50/32", "a: announce", "a: remove 198.51.100.50/32", "a: holder removed".
  std::vector<std::string> journal;
  void note(const std::string& node, const std::string& what) {
    std::string line = node + ": " + what;
    // An announcement is many frames; one line per burst.
    if (what == "announce" && !journal.empty() && journal.back() == line) return;
    journal.push_back(std::move(line));
  }

  // --- CPG ---
  class Bus final : public corosync::GroupBus {
   public:
    Bus(FakeWorld& w, std::string node, uint32_t id, corosync::GroupBusListener& l)
        : w_(w), node_(std::move(node)), id_(id) {
      w_.members_[id_] = Member{node_, &l};
    }
    ~Bus() override { w_.members_.erase(id_); }
    Result<void> send(std::span<const uint8_t> bytes) override {
      w_.group_log.emplace_back(bytes.begin(), bytes.end());
      w_.post(Packet{true, node_, id_, {}, std::vector<uint8_t>(bytes.begin(), bytes.end()), {}});
      return {};
    }
    bool connected() const override { return true; }
    std::optional<uint32_t> localNodeId() const override { return id_; }
    size_t queuedMessages() const override { return 0; }
    void drain() override { w_.deliverWaiting(node_, true); }

   private:
    FakeWorld& w_;
    std::string node_;
    uint32_t id_;
  };

  // --- UDP ---
  class Link final : public cluster::FrameLink {
   public:
    Link(FakeWorld& w, std::string node, IpAddress address, uint16_t port, OnFrame on_frame)
        : w_(w), node_(std::move(node)), address_(address), port_(port) {
      w_.links_[address_] = LinkEntry{node_, std::move(on_frame)};
    }
    ~Link() override { w_.links_.erase(address_); }
    void setPeers(std::vector<Endpoint> peers) override { peers_ = std::move(peers); }
    void send(std::span<const uint8_t> frame) override {
      for (const Endpoint& p : peers_) {
        w_.post(Packet{false, node_, 0, p.address, std::vector<uint8_t>(frame.begin(), frame.end()),
                       address_});
      }
    }
    uint64_t sendErrors() const override { return 0; }
    uint16_t port() const override { return port_; }
    void drain() override { w_.deliverWaiting(node_, false); }
    const std::vector<Endpoint>& peers() const { return peers_; }

   private:
    FakeWorld& w_;
    std::string node_;
    IpAddress address_;
    uint16_t port_;
    std::vector<Endpoint> peers_;
  };

 private:
  struct Member {
    std::string node;
    corosync::GroupBusListener* listener;
  };
  struct LinkEntry {
    std::string node;
    cluster::FrameLink::OnFrame on_frame;
  };
  struct Packet {
    bool group;
    std::string from;
    uint32_t from_id;
    IpAddress to;
    std::vector<uint8_t> bytes;
    IpAddress from_address{};  // UDP: the sender's
  };

  void post(Packet p) {
    queue_.push_back(std::move(p));
    if (!timer_->armed()) timer_->arm(Millis(0));
  }
  void drain() {
    while (!queue_.empty()) {
      Packet p = std::move(queue_.front());
      queue_.pop_front();
      deliver(std::move(p));
    }
  }
  // Delivers what waits in a stalled node's sockets: both kinds, or only CPG / only UDP.
  void deliverWaiting(const std::string& node, std::optional<bool> group = std::nullopt) {
    auto it = waiting_.find(node);
    if (it == waiting_.end()) return;
    std::deque<Packet> keep;
    std::deque<Packet> now = std::move(it->second);
    waiting_.erase(it);
    for (Packet& p : now) {
      if (group && p.group != *group) {
        keep.push_back(std::move(p));
      } else {
        deliver(std::move(p), node);
      }
    }
    if (!keep.empty()) waiting_[node] = std::move(keep);
  }
  // to_node: deliver to that node only (its socket is read now), stalled or not.
  void deliver(Packet p, const std::string& to_node = "") {
    if (p.group) {
      auto members = members_;  // a delivery may destroy a member
      for (auto& [id, m] : members) {
        if (id == p.from_id || !reaches(p.from, m.node) || !members_.count(id)) continue;
        if (!to_node.empty() && m.node != to_node) continue;
        if (to_node.empty() && stalled_.count(m.node)) {
          waiting_[m.node].push_back(p);
          continue;
        }
        m.listener->onMessage(p.from_id, 4242, p.bytes);
      }
    } else {
      if (udp_blocked_) return;
      auto it = links_.find(p.to);
      if (it == links_.end() || !reaches(p.from, it->second.node)) return;
      if (to_node.empty() && stalled_.count(it->second.node)) {
        waiting_[it->second.node].push_back(std::move(p));
        return;
      }
      auto on_frame = it->second.on_frame;
      on_frame(p.bytes, p.from_address);
    }
  }

  SimDispatcher& sim_;
  FakeEchoNet echo_;
  CheckWorld checks_;
  std::unique_ptr<loop::Timer> timer_;
  std::map<uint32_t, Member> members_;
  std::map<IpAddress, LinkEntry> links_;
  std::deque<Packet> queue_;
  std::set<std::string> cut_;
  std::set<std::pair<std::string, std::string>> partitions_;
  bool udp_blocked_ = false;
  std::set<std::string> stalled_;
  std::map<std::string, std::deque<Packet>> waiting_;  // in a stalled node's sockets
};

class FakePlatform;
// The metrics endpoint as the fake platform serves it: the scrape function, until destroyed.
class FakeMetricsHandle final : public platform::Handle {
 public:
  FakeMetricsHandle(FakePlatform* platform, metrics::Scrape scrape)
      : platform_(platform), scrape_(std::move(scrape)) {}
  ~FakeMetricsHandle() override;
  std::string scrape(metrics::Format format) const { return scrape_(format); }

 private:
  FakePlatform* platform_;
  metrics::Scrape scrape_;
};

class FakeAdminServer final : public platform::AdminServer {
 public:
  explicit FakeAdminServer(std::string* group) : group_(group) {}
  Result<void> setGroup(const std::string& group) override {
    if (group == "nosuchgroup") return fail(ErrorCode::kNotFound, "no group \"nosuchgroup\"");
    *group_ = group;
    return {};
  }

 private:
  std::string* group_;
};

// The address table with every write journalled.
class JournalingTable final : public resources::AddressTable {
 public:
  JournalingTable(FakeAddressTable& table, std::function<void(const std::string&)> note)
      : t_(table), note_(std::move(note)) {}
  Result<uint32_t> interfaceIndex(const std::string& name) override {
    return t_.interfaceIndex(name);
  }
  Result<std::string> interfaceName(uint32_t ifindex) override { return t_.interfaceName(ifindex); }
  Result<std::vector<resources::rtnl::AddressEntry>> addresses(Family family) override {
    return t_.addresses(family);
  }
  Result<void> add(const resources::rtnl::AddressRequest& req) override {
    auto r = t_.add(req);
    if (r) note_("add " + req.prefix.toString());
    return r;
  }
  Result<void> remove(const resources::rtnl::AddressRequest& req) override {
    auto r = t_.remove(req);
    if (r) note_("remove " + req.prefix.toString());
    return r;
  }

 private:
  FakeAddressTable& t_;
  std::function<void(const std::string&)> note_;
};

// The sync daemons, with every start and stop journalled ("sync start master").
class JournalingSync final : public resources::ipvs::SyncKernel {
 public:
  JournalingSync(resources::ipvs::SyncKernel& k, std::function<void(const std::string&)> note)
      : k_(k), note_(std::move(note)) {}
  void daemons(
      resources::ipvs::KernelDone<std::vector<resources::ipvs::SyncDaemon>> done) override {
    k_.daemons(std::move(done));
  }
  void startDaemon(const resources::ipvs::SyncDaemon& d,
                   resources::ipvs::KernelDone<void> done) override {
    note_("sync start " + resources::ipvs::syncStateName(d.state));
    k_.startDaemon(d, std::move(done));
  }
  void stopDaemon(resources::ipvs::SyncState state,
                  resources::ipvs::KernelDone<void> done) override {
    note_("sync stop " + resources::ipvs::syncStateName(state));
    k_.stopDaemon(state, std::move(done));
  }

 private:
  resources::ipvs::SyncKernel& k_;
  std::function<void(const std::string&)> note_;
};

// Packet sockets whose sends are journalled as "announce".
class JournalingOpener final : public resources::announce::PacketSocketOpener {
 public:
  JournalingOpener(FakePacketSocketOpener& inner, std::function<void(const std::string&)> note)
      : inner_(inner), note_(std::move(note)) {}
  Result<std::unique_ptr<resources::announce::PacketSocket>> open(const std::string& interface,
                                                                  uint16_t ethertype) override {
    auto s = inner_.open(interface, ethertype);
    if (!s) return s;
    return std::unique_ptr<resources::announce::PacketSocket>(
        std::make_unique<Socket>(std::move(*s), note_));
  }

 private:
  class Socket final : public resources::announce::PacketSocket {
   public:
    Socket(std::unique_ptr<resources::announce::PacketSocket> s,
           std::function<void(const std::string&)>& note)
        : s_(std::move(s)), note_(note) {}
    const resources::announce::MacAddress& mac() const override { return s_->mac(); }
    Result<void> send(resources::announce::FrameView frame) override {
      auto r = s_->send(frame);
      if (r) note_("announce");
      return r;
    }
    int fd() const override { return s_->fd(); }
    Result<std::optional<resources::announce::Frame>> receive() override { return s_->receive(); }

   private:
    std::unique_ptr<resources::announce::PacketSocket> s_;
    std::function<void(const std::string&)>& note_;
  };
  FakePacketSocketOpener& inner_;
  std::function<void(const std::string&)> note_;
};

struct QuorumWatchHandle final : platform::Handle {
  std::unique_ptr<loop::Timer> answer;
};

// One director's operating system.
class FakePlatform final : public platform::Platform {
 public:
  FakePlatform(FakeWorld& world, std::string node, uint32_t nodeid, IpAddress address,
               std::vector<corosync::NodelistEntry> nodelist)
      : world_(world),
        node_(std::move(node)),
        nodeid_(nodeid),
        address_(address),
        nodelist_(std::move(nodelist)),
        dispatcher_(world.sim()),
        address_table_(std::make_shared<FakeAddressTable>()),
        packet_sockets_(dispatcher_),
        journaling_opener_(packet_sockets_, [this](const std::string& w) { note(w); }),
        children_(world.sim()) {
    address_table_->addInterface("eth0", 2);
    // Only the programs a test lists run (on simulated time); any other cannot start, so a
    // fence command fails.
    children_.refuse_others = true;
    state_.on_change = [this](const std::string& w) { note(w); };
  }

  loop::Dispatcher& dispatcher() override { return dispatcher_; }
  uint64_t wallClockMs() override {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<Millis>(world_.sim().now().time_since_epoch()).count() +
        wall_offset_ms);
  }
  // This node's wall clock ahead of the simulated time (a test steps it back by lowering it).
  int64_t wall_offset_ms = 0;
  uint16_t random16() override { return static_cast<uint16_t>(nodeid_ * 7919 + ++randoms_); }
  platform::Logger& logger() override { return logger_; }
  platform::Notifier& notifier() override { return notifier_; }
  const config::FileSystem& files() override { return files_; }
  StateFiles& stateFiles() override { return state_; }
  process::ChildRunner& children() override { return children_; }
  Result<std::unique_ptr<corosync::GroupBus>> openGroupBus(corosync::GroupBusListener& listener,
                                                           const std::string& group) override {
    groups_joined.push_back(group);
    return std::unique_ptr<corosync::GroupBus>(
        std::make_unique<FakeWorld::Bus>(world_, node_, nodeid_, listener));
  }
  // votequorum answers the watch at once with the current state, as trackstart with
  // CS_TRACK_CURRENT does (from the loop); a silent one never answers. A test plays the later
  // events (a lost connection, a new answer) on quorum_listener.
  Result<std::unique_ptr<platform::Handle>> watchQuorum(
      corosync::QuorumListener& listener) override {
    quorum_listener = &listener;
    auto watch = std::make_unique<QuorumWatchHandle>();
    if (!quorum_silent) {
      watch->answer = dispatcher_.createTimer([&listener] { listener.onQuorum(true); });
      watch->answer->arm(Millis(0));
    }
    return std::unique_ptr<platform::Handle>(std::move(watch));
  }
  bool quorum_silent = false;
  corosync::QuorumListener* quorum_listener = nullptr;
  Result<std::vector<corosync::NodelistEntry>> readNodelist() override { return nodelist_; }
  Result<std::unique_ptr<cluster::FrameLink>> openFrameLink(
      uint16_t port, cluster::FrameLink::OnFrame on_frame) override {
    auto link =
        std::make_unique<FakeWorld::Link>(world_, node_, address_, port, std::move(on_frame));
    link_ = link.get();
    return std::unique_ptr<cluster::FrameLink>(std::move(link));
  }
  ping::MakeEchoTransport echoTransports() override { return world_.echo().transportFor(node_); }
  Result<std::shared_ptr<resources::AddressTable>> openAddressTable() override {
    return std::shared_ptr<resources::AddressTable>(std::make_shared<JournalingTable>(
        *address_table_, [this](const std::string& w) { note(w); }));
  }
  Result<std::unique_ptr<resources::route::RouteTable>> openRouteTable() override {
    return std::unique_ptr<resources::route::RouteTable>(
        std::make_unique<fakes::RouteTableView>(route_table_));
  }
  resources::announce::PacketSocketOpener& packetSockets() override { return journaling_opener_; }
  Result<std::unique_ptr<resources::ipvs::Kernel>> openIpvs() override {
    return std::unique_ptr<resources::ipvs::Kernel>(std::make_unique<KernelView>(ipvs_kernel_));
  }
  std::unique_ptr<resources::ipvs::OwnedStore> openIpvsOwned(const std::string&) override {
    return nullptr;
  }
  Result<std::unique_ptr<resources::sync::SyncTap>> openSyncTap(
      const resources::ipvs::SyncDaemon& backup,
      resources::sync::OnSyncDatagram on_datagram) override {
    return sync_taps_.opener()(backup, std::move(on_datagram));
  }
  Result<std::unique_ptr<resources::ipvs::SyncKernel>> openSync() override {
    return std::unique_ptr<resources::ipvs::SyncKernel>(
        std::make_unique<JournalingSync>(sync_kernel_, [this](const std::string& w) { note(w); }));
  }
  std::unique_ptr<resources::health::Checker> makeChecker(config::CheckType) override {
    return std::make_unique<FakeChecker>(world_.checks(), node_);
  }
  resources::sysctl::SysctlReader& sysctlReader() override { return sysctl_; }
  resources::sysctl::SysctlWriter& sysctlWriter() override { return sysctl_; }
  Result<std::unique_ptr<platform::AdminServer>> serveAdmin(
      ipc::AdminHandler&, const platform::AdminServerOptions& options) override {
    admin_group = options.group;
    return std::unique_ptr<platform::AdminServer>(std::make_unique<FakeAdminServer>(&admin_group));
  }

  // The metrics endpoint: no socket; a test scrapes through scrape() while it is served.
  Result<std::unique_ptr<platform::Handle>> serveMetrics(const Endpoint& listen,
                                                         metrics::Scrape scrape) override {
    if (metrics_refuse) {
      return fail(ErrorCode::kUnavailable,
                  "cannot listen on " + listen.toString() + " for the metrics (metrics.listen)");
    }
    metrics_listen = listen;
    auto handle = std::make_unique<FakeMetricsHandle>(this, std::move(scrape));
    metrics_handle_ = handle.get();
    return std::unique_ptr<platform::Handle>(std::move(handle));
  }
  metrics::ProcessStats processStats() override { return process_stats; }
  // The text a scrape returns; nullopt while nothing is served.
  std::optional<std::string> scrape(metrics::Format format = metrics::Format::kPrometheusText) {
    if (metrics_handle_ == nullptr) return std::nullopt;
    return metrics_handle_->scrape(format);
  }

  NodeDispatcher& nodeDispatcher() { return dispatcher_; }
  FakeLogger& log() { return logger_; }
  FakeNotifier& notifications() { return notifier_; }
  FakeFileSystem& fileSystem() { return files_; }
  FakeStateFiles& state() { return state_; }
  FakeAddressTable& addresses() { return *address_table_; }
  fakes::FakeRouteTable& routes() { return route_table_; }
  FakePacketSocketOpener& sockets() { return packet_sockets_; }
  FakeIpvsKernel& ipvsKernel() { return ipvs_kernel_; }
  FakeSyncKernel& syncKernel() { return sync_kernel_; }
  FakeSyncTaps& syncTaps() { return sync_taps_; }
  // The children it ran (the [notify] hooks): a test lists the programs that run in `programs`.
  SimChildren& childProcesses() { return children_; }
  FakeWorld::Link* link() { return link_; }
  const std::string& node() const { return node_; }

  std::vector<std::string> groups_joined;
  std::string admin_group;
  std::optional<Endpoint> metrics_listen;  // where the endpoint was last opened
  bool metrics_refuse = false;             // serveMetrics fails (the address is taken)
  metrics::ProcessStats process_stats{1.5, 20 << 20, 12, 1.7e9};

 private:
  friend class FakeMetricsHandle;
  FakeMetricsHandle* metrics_handle_ = nullptr;
  void note(const std::string& what) { world_.note(node_, what); }

  FakeWorld& world_;
  std::string node_;
  uint32_t nodeid_;
  IpAddress address_;
  std::vector<corosync::NodelistEntry> nodelist_;
  NodeDispatcher dispatcher_;
  FakeLogger logger_;
  FakeNotifier notifier_;
  FakeFileSystem files_;
  FakeStateFiles state_;
  std::shared_ptr<FakeAddressTable> address_table_;
  fakes::FakeRouteTable route_table_;
  FakePacketSocketOpener packet_sockets_;
  JournalingOpener journaling_opener_;
  SimChildren children_;
  FakeIpvsKernel ipvs_kernel_;
  FakeSyncKernel sync_kernel_{dispatcher_};
  FakeSyncTaps sync_taps_;
  FakeSysctl sysctl_;
  FakeWorld::Link* link_ = nullptr;
  uint16_t randoms_ = 0;
};

inline FakeMetricsHandle::~FakeMetricsHandle() {
  if (platform_->metrics_handle_ == this) platform_->metrics_handle_ = nullptr;
}

}  // namespace tandem::fakes
