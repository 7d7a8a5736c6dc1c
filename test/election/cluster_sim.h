#pragma once

// A whole cluster of ClusterCores on simulated time: a bus that delivers heartbeats and
// releases between the nodes that can reach each other, resources that take a little while to
// start and stop, a fence that succeeds or fails on demand, crashes, restarts and partitions.
// Nothing here sleeps; advance() replays the events in time order.

#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "election/cluster_core.h"

namespace tandem::election::sim {

using namespace std::chrono_literals;

struct SimNode {
  std::string name;
  int priority = 100;
  std::unique_ptr<ClusterCore> core;  // null while the daemon is down
  bool held = false;                  // the kernel's view: VIPs on the interface
  std::string persisted_role = "INIT";
  uint64_t persisted_epoch = 0;
  std::string persisted_maintenance;  // "on 5", "off 6"; "" never set
  int group = 0;                      // partition id: only nodes of one group hear each other
  bool fence_works = true;
  int starts = 0, stops = 0, fences = 0, reannounces = 0, alarms = 0;
  uint64_t incarnation = 0;
  uint64_t tick_gen = 0;  // only the newest scheduled tick fires
};

class SimCluster {
 public:
  struct Options {
    Millis heartbeat_interval = 200ms;
    Millis dead_time = 1000ms;
    Policy policy;
    bool fencing = false;
    Millis resource_time = 20ms;  // how long a start or stop takes
    Millis fence_time = 50ms;
    bool quorum_silent = false;  // votequorum never answers a node that starts
    bool ignore_quorum = false;  // no_quorum_policy = "ignore"
    Millis quorum_hold = 8000ms;
  };

  SimCluster(std::vector<std::pair<std::string, int>> nodes, Options opt) : opt_(opt) {
    for (auto& [name, prio] : nodes) {
      SimNode n;
      n.name = name;
      n.priority = prio;
      nodes_[name] = std::move(n);
    }
  }

  Time now() const { return now_; }
  SimNode& node(const std::string& name) { return nodes_.at(name); }
  // From now on votequorum answers a node that starts only when the test says so.
  void quorumSilentAtStart(bool on) { opt_.quorum_silent = on; }

  void start(const std::string& name) {
    SimNode& n = nodes_.at(name);
    CoreConfig cfg;
    cfg.self = name;
    cfg.priority = n.priority;
    for (auto& [other, o] : nodes_) {
      if (other != name) cfg.peers[other] = o.priority;
    }
    cfg.heartbeat_interval = opt_.heartbeat_interval;
    cfg.dead_time = opt_.dead_time;
    cfg.policy = opt_.policy;
    cfg.fencing = opt_.fencing;
    cfg.ignore_quorum = opt_.ignore_quorum;
    cfg.quorum_hold = opt_.quorum_hold;
    Startup st{n.persisted_role == "ACTIVE", n.held, n.persisted_epoch};
    if (!n.persisted_maintenance.empty()) {
      st.maintenance = n.persisted_maintenance.starts_with("on ");
      st.maintenance_generation = std::stoull(n.persisted_maintenance.substr(3));
    }
    n.core = std::make_unique<ClusterCore>(cfg, now_, st);
    n.incarnation = ++incarnations_;
    // votequorum answers at once, unless the test says it stays silent.
    if (!opt_.quorum_silent) handle(name, n.core->onQuorum(now_, true));
    handle(name, n.core->onTick(now_));
    scheduleBeat(name, n.incarnation);
    scheduleTick(name);
  }

  // kill -9 of the daemon: the kernel keeps whatever it held.
  void crash(const std::string& name) {
    nodes_.at(name).core.reset();
    for (auto& [other, o] : nodes_) {
      if (other != name && o.core && reachable(name, other)) {
        deliver(other, [name](ClusterCore& c, Time t) { return c.onDaemonLeft(t, name); });
      }
    }
  }

  // The whole node goes away (power, kernel): corosync drops it after its token timeout.
  void powerOff(const std::string& name, Millis membership_delay) {
    SimNode& n = nodes_.at(name);
    n.core.reset();
    n.held = false;
    n.persisted_role = "INIT";
    at(now_ + membership_delay, [this, name] {
      for (auto& [other, o] : nodes_) {
        if (other != name && o.core) {
          deliver(other, [name](ClusterCore& c, Time t) { return c.onNodeLeft(t, name); });
        }
      }
    });
  }

  // An input from outside the bus (an operator, the local health), with its actions carried out.
  void act(const std::string& name, const std::function<Actions(ClusterCore&, Time)>& fn) {
    deliver(name, fn);
  }

  void partition(const std::vector<std::string>& side) {
    for (const auto& s : side) nodes_.at(s).group = 1;
  }
  void heal() {
    for (auto& [name, n] : nodes_) n.group = 0;
  }

  void advance(Millis d) { runUntil(now_ + d); }

  // Runs until pred() holds or the limit passes; returns the time it took.
  std::optional<Millis> advanceUntil(const std::function<bool()>& pred, Millis limit) {
    Time start = now_, end = now_ + limit;
    while (!pred()) {
      if (events_.empty() || events_.top().when > end) {
        now_ = end;
        return std::nullopt;
      }
      step();
    }
    return std::chrono::duration_cast<Millis>(now_ - start);
  }

  std::vector<std::string> holders() const {
    std::vector<std::string> out;
    for (const auto& [name, n] : nodes_) {
      if (n.held) out.push_back(name);
    }
    return out;
  }
  std::vector<std::string> activeNodes() const {
    std::vector<std::string> out;
    for (const auto& [name, n] : nodes_) {
      if (n.core && n.core->role() == Role::kActive) out.push_back(name);
    }
    return out;
  }
  Role role(const std::string& name) const { return nodes_.at(name).core->role(); }

  // The largest number of nodes that held resources at once within one group, over the run.
  int maxHoldersInOneGroup() const { return max_holders_; }
  std::vector<std::string> log;

 private:
  struct Event {
    Time when;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Event& o) const { return std::tie(when, seq) > std::tie(o.when, o.seq); }
  };

  bool reachable(const std::string& a, const std::string& b) const {
    return nodes_.at(a).group == nodes_.at(b).group;
  }

  void at(Time when, std::function<void()> fn) { events_.push({when, ++seq_, std::move(fn)}); }

  void step() {
    Event e = events_.top();
    events_.pop();
    now_ = e.when;
    e.fn();
    trackHolders();
  }

  void runUntil(Time end) {
    while (!events_.empty() && events_.top().when <= end) step();
    now_ = end;
  }

  void trackHolders() {
    std::map<int, int> per_group;
    for (const auto& [name, n] : nodes_) {
      if (n.held) max_holders_ = std::max(max_holders_, ++per_group[n.group]);
    }
  }

  void deliver(const std::string& to, const std::function<Actions(ClusterCore&, Time)>& fn) {
    SimNode& n = nodes_.at(to);
    if (!n.core) return;
    handle(to, fn(*n.core, now_));
    scheduleTick(to);
  }

  void broadcastHeartbeat(const std::string& from) {
    SimNode& n = nodes_.at(from);
    if (!n.core) return;
    Heartbeat hb = n.core->heartbeat();
    hb.incarnation = n.incarnation;
    for (auto& [other, o] : nodes_) {
      if (other == from || !reachable(from, other)) continue;
      deliver(other, [hb](ClusterCore& c, Time t) { return c.onHeartbeat(t, hb); });
    }
  }

  void scheduleBeat(const std::string& name, uint64_t inc) {
    at(now_ + opt_.heartbeat_interval, [this, name, inc] {
      SimNode& n = nodes_.at(name);
      if (!n.core || n.incarnation != inc) return;
      broadcastHeartbeat(name);
      scheduleBeat(name, inc);
    });
  }

  void scheduleTick(const std::string& name) {
    SimNode& n = nodes_.at(name);
    if (!n.core) return;
    auto next = n.core->nextDeadline();
    if (!next) return;
    uint64_t inc = n.incarnation;
    uint64_t gen = ++n.tick_gen;
    at(std::max(*next, now_), [this, name, inc, gen] {
      SimNode& m = nodes_.at(name);
      if (!m.core || m.incarnation != inc || m.tick_gen != gen) return;
      handle(name, m.core->onTick(now_));
      auto again = m.core->nextDeadline();
      if (again && *again > now_) scheduleTick(name);
    });
  }

  void handle(const std::string& name, const Actions& actions) {
    SimNode& n = nodes_.at(name);
    uint64_t inc = n.incarnation;
    for (const Action& a : actions) {
      switch (a.kind) {
        case Action::Kind::kStartResources:
          ++n.starts;
          at(now_ + opt_.resource_time, [this, name, inc] {
            SimNode& m = nodes_.at(name);
            if (!m.core || m.incarnation != inc) return;
            m.held = true;
            deliver(name, [](ClusterCore& c, Time t) { return c.onResourcesStarted(t); });
          });
          break;
        case Action::Kind::kStopResources:
          ++n.stops;
          at(now_ + opt_.resource_time, [this, name, inc] {
            SimNode& m = nodes_.at(name);
            if (!m.core || m.incarnation != inc) return;
            m.held = false;
            deliver(name, [](ClusterCore& c, Time t) { return c.onResourcesStopped(t); });
          });
          break;
        case Action::Kind::kRunFence:
          ++n.fences;
          at(now_ + opt_.fence_time, [this, name, inc, target = a.text] {
            SimNode& m = nodes_.at(name);
            if (!m.core || m.incarnation != inc) return;
            bool ok = m.fence_works;
            if (ok && nodes_.count(target)) {
              // A fenced node is powered off: its daemon and its resources are gone.
              nodes_.at(target).core.reset();
              nodes_.at(target).held = false;
              nodes_.at(target).persisted_role = "INIT";
            }
            deliver(name, [ok](ClusterCore& c, Time t) {
              return c.onFenceResult(t, ok, ok ? "off" : "timeout");
            });
          });
          break;
        case Action::Kind::kSendHeartbeat: {
          std::string from = name;
          at(now_, [this, from] { broadcastHeartbeat(from); });
          break;
        }
        case Action::Kind::kSendRelease: {
          std::string from = name;
          const uint64_t epoch = n.core->heartbeat().epoch;
          at(now_, [this, from, epoch] {
            for (auto& [other, o] : nodes_) {
              if (other == from || !reachable(from, other)) continue;
              deliver(other, [from, epoch](ClusterCore& c, Time t) {
                return c.onRelease(t, from, epoch);
              });
            }
          });
          break;
        }
        case Action::Kind::kReannounce:
          ++n.reannounces;
          break;
        case Action::Kind::kPersistMaintenance:
          n.persisted_maintenance = a.text;
          break;
        case Action::Kind::kPersistRole:
          n.persisted_role = a.text;
          n.persisted_epoch = n.core ? n.core->heartbeat().epoch : 0;
          break;
        case Action::Kind::kAlarm:
          ++n.alarms;
          break;
        case Action::Kind::kLog:
        case Action::Kind::kRoleChanged:
        case Action::Kind::kCancelFence:
          break;
      }
      log.push_back(name + ": " + std::string(actionKindName(a.kind)) + " " + a.text);
    }
  }

  Options opt_;
  std::map<std::string, SimNode> nodes_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  Time now_{};
  uint64_t seq_ = 0;
  uint64_t incarnations_ = 0;
  int max_holders_ = 0;
};

}  // namespace tandem::election::sim
