#pragma once

// Whole directors in one process, for the component tests: each a Director on its own
// FakePlatform, all on one simulated dispatcher, joined by a FakeWorld that carries their UDP
// frames and CPG messages and can cut or partition them. A test file derives its own fixture
// from Cluster (gtest wants one fixture class per suite name).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "director/director.h"
#include "director/fake_platform.h"

namespace tandem::director {
namespace {

using namespace std::chrono_literals;
using election::Role;
using fakes::FakePlatform;
using platform::LogLevel;

constexpr char kPath[] = "/etc/tandem/tandem.conf";

struct NodeSpec {
  std::string name;
  int priority;
  std::string address;
};

// What the test varies in the config; everything else is as the shipped timers have it.
struct Conf {
  std::vector<NodeSpec> nodes;
  std::vector<std::string> vips = {"198.51.100.50/32"};
  std::vector<int> keys = {1};
  int active_key = 1;
  std::string failback = "manual";
  std::string heartbeat_interval = "200ms";
  std::string group = "tandem";
  std::string control_group = "root";
  std::string log_level = "info";
  std::string fence;       // a command line, or none
  std::string tiebreaker;  // a target address, or none
  std::vector<std::string> real_servers = {"203.0.113.11:80"};
  std::string fallback;         // the sorry server, or none
  std::string check;            // the lines of [virtual_server.check], or none
  std::string sync;             // the lines of [sync], or none
  bool key_credential = false;  // keys from systemd credentials "tandem.authkey.N", not files
  std::string notify;           // the lines of [notify], or none
  std::string metrics;          // the lines of [metrics], or none
  std::string route;            // the lines of [route], or none
  std::string vs_route;         // the lines of [virtual_server.route], or none

  std::string text() const {
    std::string t = "[cluster]\nname = \"t\"\ngroup = \"" + group + "\"\nheartbeat_interval = \"" +
                    heartbeat_interval + "\"\ndead_time = \"1s\"\nfailback = \"" + failback +
                    "\"\n";
    if (keys.size() > 1) t += "active_key = " + std::to_string(active_key) + "\n";
    for (int k : keys) {
      t += "[[cluster.key]]\nid = " + std::to_string(k) +
           (key_credential ? "\ncredential = \"tandem.authkey." : "\nfile = \"authkey.") +
           std::to_string(k) + "\"\n";
    }
    if (!fence.empty()) t += "[cluster.fence]\ncommand = \"" + fence + "\"\n";
    if (!tiebreaker.empty()) {
      t += "[cluster.tiebreaker]\ntargets = [\"" + tiebreaker +
           "\"]\ninterval = \"200ms\"\ntimeout = \"300ms\"\n";
    }
    for (const auto& n : nodes) {
      t += "[[node]]\nname = \"" + n.name + "\"\naddress = \"" + n.address +
           "\"\npriority = " + std::to_string(n.priority) + "\ninterfaces = [\"eth0\"]\n";
    }
    for (const auto& v : vips) t += "[[vip]]\naddress = \"" + v + "\"\ninterface = \"eth0\"\n";
    t += "[[virtual_server]]\nname = \"web\"\naddress = \"198.51.100.50:80\"\n";
    if (!fallback.empty()) t += "fallback = \"" + fallback + "\"\n";
    if (!check.empty()) t += "[virtual_server.check]\n" + check;
    if (!vs_route.empty()) t += "[virtual_server.route]\n" + vs_route;
    for (const auto& r : real_servers) {
      t += "[[virtual_server.real_server]]\naddress = \"" + r + "\"\n";
    }
    if (!sync.empty()) t += "[sync]\n" + sync;
    if (!metrics.empty()) t += "[metrics]\n" + metrics;
    if (!route.empty()) t += "[route]\n" + route;
    t += "[control]\ngroup = \"" + control_group + "\"\n[daemon]\nlog_level = \"" + log_level +
         "\"\n";
    if (!notify.empty()) t += "[notify]\n" + notify;
    return t;
  }
};

class Cluster : public ::testing::Test {
 protected:
  void build(std::vector<NodeSpec> nodes) {
    conf_.nodes = std::move(nodes);
    std::vector<corosync::NodelistEntry> nodelist;
    uint32_t id = 1;
    for (const auto& n : conf_.nodes) nodelist.push_back({id++, n.name, n.address});
    id = 1;
    for (const auto& n : conf_.nodes) {
      platforms_[n.name] = std::make_unique<FakePlatform>(world_, n.name, id++,
                                                          *IpAddress::parse(n.address), nodelist);
      writeKeys(n.name);
      platforms_[n.name]->fileSystem().write(kPath, conf_.text());
    }
  }
  void writeKeys(const std::string& node) {
    for (int k : {1, 2, 3}) {
      platforms_[node]->fileSystem().write("/etc/tandem/authkey." + std::to_string(k),
                                           std::string(32, static_cast<char>('a' + k)), 0600);
    }
  }
  void writeConf(const std::string& node, const Conf& c) {
    platforms_[node]->fileSystem().write(kPath, c.text());
  }
  void start(const std::string& node) {
    DirectorOptions o;
    o.config_path = kPath;
    o.node_name = node;
    o.failback_override = failback_override_[node];
    directors_[node] = std::make_unique<Director>(*platforms_[node], o);
    auto started = directors_[node]->start();
    ASSERT_TRUE(started) << node << ": " << started.error().message;
  }
  void startAll() {
    for (const auto& n : conf_.nodes) start(n.name);
  }
  void kill(const std::string& node) { directors_.erase(node); }
  // corosync went away under the node's tandemd (stopped, or restarting).
  void loseVotequorum(const std::string& node) {
    platforms_[node]->quorum_listener->onConnectionLost(
        Error{ErrorCode::kUnavailable, "votequorum_dispatch: CS_ERR_LIBRARY"});
  }

  Role role(const std::string& node) {
    auto it = directors_.find(node);
    if (it == directors_.end() || !it->second->clusterNode()) return Role::kInit;
    return it->second->clusterNode()->role();
  }
  std::vector<std::string> active() {
    std::vector<std::string> out;
    for (auto& [name, d] : directors_) {
      if (role(name) == Role::kActive) out.push_back(name);
    }
    return out;
  }
  bool holdsVip(const std::string& node, const char* vip = "198.51.100.50/32") {
    return platforms_[node]->addresses().find("eth0", vip).has_value();
  }
  // Advances in 10 ms steps, failing the test at the first step where two are ACTIVE.
  void run(Millis d) {
    for (Millis t{0}; t < d; t += 10ms) {
      sim_.advance(10ms);
      ASSERT_LE(active().size(), 1u) << "two ACTIVE directors at +" << t.count() << " ms";
    }
  }
  // Advances until pred holds (10 ms steps, never two ACTIVE); returns how long it took.
  template <typename Pred>
  std::optional<Millis> runUntil(Millis limit, Pred pred, bool allow_two = false) {
    for (Millis t{0}; t <= limit; t += 10ms) {
      if (pred()) return t;
      sim_.advance(10ms);
      if (!allow_two) {
        EXPECT_LE(active().size(), 1u) << "two ACTIVE directors at +" << t.count() << " ms";
      }
    }
    return std::nullopt;
  }
  // Runs until `node` is ACTIVE (10 ms steps); returns how long it took. Fails the test if it
  // is ACTIVE without every VIP of the config on its interface.
  std::optional<Millis> untilActiveHoldingVips(const std::string& node) {
    return runUntil(2s, [&] {
      if (role(node) != Role::kActive) return false;
      for (const std::string& v : conf_.vips) {
        EXPECT_TRUE(holdsVip(node, v.c_str())) << node << " is ACTIVE without " << v;
      }
      return true;
    });
  }
  void reload(const std::string& node) {
    ASSERT_TRUE(platforms_[node]->nodeDispatcher().deliver(loop::Signal::kHangup));
  }
  std::vector<std::string> journalOf(const std::string& node, size_t from = 0) {
    std::vector<std::string> out;
    for (size_t i = from; i < world_.journal.size(); ++i) {
      const std::string& l = world_.journal[i];
      if (l.rfind(node + ": ", 0) == 0) out.push_back(l.substr(node.size() + 2));
    }
    return out;
  }
  const wire::FrameCounters& counters(const std::string& node) {
    return directors_[node]->clusterNode()->frameCounters();
  }

  fakes::SimDispatcher sim_;
  fakes::FakeWorld world_{sim_};
  Conf conf_;
  std::map<std::string, std::string> failback_override_;  // TANDEM_FAILBACK per node
  std::map<std::string, std::unique_ptr<FakePlatform>> platforms_;
  // Declared last: directors go before the platforms they run on.
  std::map<std::string, std::unique_ptr<Director>> directors_;

  void TearDown() override { directors_.clear(); }
};

const std::vector<NodeSpec> kPair = {{"a", 200, "198.51.100.1"}, {"b", 100, "198.51.100.2"}};
const std::vector<NodeSpec> kTrio = {
    {"a", 200, "198.51.100.1"}, {"b", 150, "198.51.100.2"}, {"c", 100, "198.51.100.3"}};

}  // namespace
}  // namespace tandem::director
