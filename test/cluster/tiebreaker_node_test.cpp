// Two ClusterNodes (the daemon's cluster runtime) on one simulated dispatcher: a fake group bus
// joins them, a fake network answers (or drops) their echo requests to the tiebreaker target.
// Everything runs on simulated time; nothing sleeps.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>

#include "cluster/cluster_node.h"
#include "fake_echo.h"
#include "fakes/sim_dispatcher.h"

namespace tandem::cluster {
namespace {

using namespace std::chrono_literals;
using election::Role;

// Carries every message to every other node, on the loop, unless the pair is partitioned.
class FakeGroup {
 public:
  explicit FakeGroup(loop::Dispatcher& d) {
    timer_ = d.createTimer([this] { drain(); });
  }
  void join(uint32_t nodeid, corosync::GroupBusListener* l) { members_[nodeid] = l; }
  void leave(uint32_t nodeid) { members_.erase(nodeid); }
  void partition(bool on) { partitioned_ = on; }
  void post(uint32_t from, std::span<const uint8_t> bytes) {
    queue_.push_back({from, std::vector<uint8_t>(bytes.begin(), bytes.end())});
    if (!timer_->armed()) timer_->arm(0ms);
  }

 private:
  void drain() {
    while (!queue_.empty()) {
      auto [from, bytes] = std::move(queue_.front());
      queue_.pop_front();
      if (partitioned_) continue;
      for (auto& [id, l] : members_) {
        if (id != from) l->onMessage(from, 4242, bytes);
      }
    }
  }
  std::unique_ptr<loop::Timer> timer_;
  std::map<uint32_t, corosync::GroupBusListener*> members_;
  std::deque<std::pair<uint32_t, std::vector<uint8_t>>> queue_;
  bool partitioned_ = false;
};

class FakeBus final : public corosync::GroupBus {
 public:
  void drain() override {}

 public:
  FakeBus(FakeGroup& g, uint32_t id, corosync::GroupBusListener& l) : group_(g), id_(id) {
    group_.join(id, &l);
  }
  ~FakeBus() override { group_.leave(id_); }
  Result<void> send(std::span<const uint8_t> bytes) override {
    group_.post(id_, bytes);
    return Result<void>();
  }
  bool connected() const override { return true; }
  std::optional<uint32_t> localNodeId() const override { return id_; }
  size_t queuedMessages() const override { return 0; }

 private:
  FakeGroup& group_;
  uint32_t id_;
};

class NoChildren final : public process::ChildRunner {
 public:
  Result<std::unique_ptr<process::ChildHandle>> run(
      const process::CommandLine&, const std::vector<std::string>&, Millis,
      std::function<void(process::ChildResult)>) override {
    return fail(ErrorCode::kUnavailable, "no children in this test");
  }
};

// A resource that is a flag: started or not.
class FlagResource final : public resources::Resource {
 public:
  explicit FlagResource(bool* held) : held_(held) {}
  std::string_view name() const override { return "flag"; }
  void start(resources::Done done) override {
    *held_ = true;
    done(Result<void>());
  }
  void stop(resources::Done done) override {
    *held_ = false;
    done(Result<void>());
  }
  void monitor(resources::Done done) override { done(Result<void>()); }
  bool present() const override { return *held_; }

 private:
  bool* held_;
};

class TiebreakerNodeTest : public ::testing::Test {
 protected:
  TiebreakerNodeTest() {
    char tmpl[] = "/tmp/tandem-tb-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    std::ofstream(dir_ + "/authkey") << std::string(32, 'k');
    ::chmod((dir_ + "/authkey").c_str(), 0600);
    cfg_.source = dir_ + "/tandem.conf";
    cfg_.cluster.name = "t";
    cfg_.cluster.keys = {config::AuthKey{1, "authkey", ""}};
    cfg_.cluster.heartbeat_interval = 200ms;
    cfg_.cluster.group_heartbeat_interval = 200ms;  // the fake bus is the only path here
    cfg_.cluster.dead_time = 1000ms;
    // Loss is seen within interval + timeout = 500 ms: before dead_time, so a cut-off BACKUP
    // is out of the running before it would declare its peer dead.
    cfg_.cluster.tiebreaker =
        config::Tiebreaker{{*IpAddress::parse("198.51.100.100")}, 200ms, 300ms};
    config::Node a;
    a.name = "a";
    a.priority = 200;
    config::Node b;
    b.name = "b";
    b.priority = 100;
    cfg_.nodes = {a, b};
  }
  ~TiebreakerNodeTest() override {
    nodes_.clear();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void start(const std::string& name, uint32_t id) {
    NodeEnv env{
        sim_,
        children_,
        [this, name](LogLevel, const std::string& line) { log_.push_back(name + ": " + line); },
        [this, id](corosync::GroupBusListener& l) -> Result<std::unique_ptr<corosync::GroupBus>> {
          return std::unique_ptr<corosync::GroupBus>(std::make_unique<FakeBus>(group_, id, l));
        },
        {},
        ++incarnation_,  // a restart is a new run
        dir_ + "/" + name,
        0,
        net_.transportFor(name),
        {},
        nullptr,
        nullptr,
        {},
        {},
        {}};
    resources::ResourceChain::List res;
    res.push_back(std::make_shared<FlagResource>(&held_[name]));
    auto node = ClusterNode::create(std::move(env), cfg_, name, std::move(res));
    ASSERT_TRUE(node) << node.error().message;
    ASSERT_TRUE((*node)->start());
    (*node)->onQuorum(true);  // votequorum's first answer
    nodes_[name] = std::move(*node);
  }

  Role role(const std::string& n) { return nodes_.at(n)->role(); }
  int active() {
    int n = 0;
    for (auto& [name, node] : nodes_) n += node->role() == Role::kActive ? 1 : 0;
    return n;
  }
  // Advances in 10 ms steps, checking that never two nodes are ACTIVE or hold the resource.
  void run(Millis d) {
    for (Millis t{0}; t < d; t += 10ms) {
      sim_.advance(10ms);
      ASSERT_LE(active(), 1) << "two ACTIVE at " << t.count() << " ms";
      ASSERT_FALSE(held_["a"] && held_["b"]) << "both hold the resource at " << t.count();
    }
  }
  bool logged(const std::string& text) const {
    for (const auto& l : log_) {
      if (l.find(text) != std::string::npos) return true;
    }
    return false;
  }

  fakes::SimDispatcher sim_;
  fakes::FakeEchoNet net_{sim_, 1ms};
  FakeGroup group_{sim_};
  NoChildren children_;
  std::string dir_;
  config::Config cfg_;
  std::map<std::string, bool> held_{{"a", false}, {"b", false}};
  std::vector<std::string> log_;
  uint64_t incarnation_ = 1000;
  std::map<std::string, std::unique_ptr<ClusterNode>> nodes_;
};

TEST_F(TiebreakerNodeTest, ANormalStartIsNotDelayed) {
  start("a", 1);
  start("b", 2);
  EXPECT_EQ(nodes_["a"]->tiebreaker(), ping::Reach::kPending);
  run(300ms);
  EXPECT_EQ(nodes_["a"]->tiebreaker(), ping::Reach::kReached);
  EXPECT_EQ(role("a"), Role::kActive);
  EXPECT_EQ(role("b"), Role::kBackup);
  EXPECT_TRUE(logged("a: tiebreaker reached: 198.51.100.100 answered"));
  EXPECT_FALSE(logged("tiebreaker lost"));
}

TEST_F(TiebreakerNodeTest, LossReleasesTheActiveAndThePeerTakesOverThenRegained) {
  start("a", 1);
  start("b", 2);
  run(1000ms);
  ASSERT_EQ(role("a"), Role::kActive);
  net_.cut("a");
  run(600ms);  // interval + timeout = 500 ms at most
  EXPECT_TRUE(logged(
      "a: tiebreaker lost: none of 198.51.100.100 answered within 300ms node=a role=ACTIVE"));
  EXPECT_EQ(role("a"), Role::kFault);
  EXPECT_EQ(role("b"), Role::kActive);
  EXPECT_TRUE(held_["b"]);
  EXPECT_FALSE(held_["a"]);
  EXPECT_EQ(nodes_["a"]->status().nodes[0].health, 0);  // the health score while it fails
  net_.restore("a");
  // Regained once the target has answered for dead_time (1 s), not at the first answer.
  run(900ms);
  EXPECT_FALSE(logged("tiebreaker regained"));
  EXPECT_EQ(role("a"), Role::kFault);
  run(400ms);
  EXPECT_TRUE(logged("a: tiebreaker regained: 198.51.100.100 answered for 1s node=a"));
  EXPECT_EQ(nodes_["a"]->status().nodes[0].health, 1000);
  // Manual failback (the default): b keeps the service.
  EXPECT_EQ(role("a"), Role::kBackup);
  EXPECT_EQ(role("b"), Role::kActive);
}

// A switch failure cuts a off from b and from the target at once: b, which still reaches the
// target, takes over; a releases, and never two are ACTIVE in between.
TEST_F(TiebreakerNodeTest, PartitionActiveCutOffFromTheTargetOnlyThePeerIsActive) {
  start("a", 1);
  start("b", 2);
  run(1000ms);
  ASSERT_EQ(role("a"), Role::kActive);
  group_.partition(true);
  net_.cut("a");
  run(5000ms);
  EXPECT_EQ(role("a"), Role::kFault);
  EXPECT_EQ(role("b"), Role::kActive);
  // Heal: a reaches the target again and sees b ACTIVE; b stays.
  net_.restore("a");
  group_.partition(false);
  run(2000ms);
  EXPECT_EQ(role("a"), Role::kBackup);
  EXPECT_EQ(role("b"), Role::kActive);
}

TEST_F(TiebreakerNodeTest, PartitionBackupCutOffFromTheTargetNeverTakesOver) {
  start("a", 1);
  start("b", 2);
  run(1000ms);
  ASSERT_EQ(role("a"), Role::kActive);
  group_.partition(true);
  net_.cut("b");
  run(5000ms);  // run() fails at once if b ever becomes ACTIVE beside a
  EXPECT_EQ(role("a"), Role::kActive);
  EXPECT_EQ(role("b"), Role::kFault);
  EXPECT_FALSE(held_["b"]);
  net_.restore("b");
  group_.partition(false);
  run(2000ms);
  EXPECT_EQ(role("a"), Role::kActive);
  EXPECT_EQ(role("b"), Role::kBackup);
}

TEST_F(TiebreakerNodeTest, ANodeThatNeverReachesTheTargetNeverBecomesActive) {
  net_.cut("a");
  start("a", 1);
  start("b", 2);
  run(3000ms);
  EXPECT_EQ(role("a"), Role::kFault);
  EXPECT_EQ(role("b"), Role::kActive);
  EXPECT_FALSE(held_["a"]);
  EXPECT_TRUE(logged("a: tiebreaker pending: waiting for an answer from 198.51.100.100"));
}

TEST_F(TiebreakerNodeTest, WithoutAnyTargetNobodyIsActive) {
  net_.cut("a");
  net_.cut("b");
  start("a", 1);
  start("b", 2);
  run(5000ms);
  EXPECT_EQ(active(), 0);
  EXPECT_FALSE(held_["a"] || held_["b"]);
}

TEST_F(TiebreakerNodeTest, ARestartedActiveKeepsItsResourcesWhileTheFirstRoundIsOut) {
  start("a", 1);
  start("b", 2);
  run(1000ms);
  ASSERT_EQ(role("a"), Role::kActive);
  // tandemd on a restarts; the resource (the kernel's VIPs) stays in place.
  nodes_.erase("a");
  start("a", 1);
  bool dropped = false;
  for (int i = 0; i < 200; ++i) {
    sim_.advance(10ms);
    dropped = dropped || !held_["a"];
  }
  EXPECT_FALSE(dropped);
  EXPECT_EQ(role("a"), Role::kActive);
  EXPECT_EQ(role("b"), Role::kBackup);
}

TEST_F(TiebreakerNodeTest, ARestartedActiveThatReachesNothingGivesUp) {
  start("a", 1);
  start("b", 2);
  run(1000ms);
  nodes_.erase("a");
  net_.cut("a");
  start("a", 1);
  run(1000ms);
  EXPECT_FALSE(held_["a"]);
  EXPECT_EQ(role("b"), Role::kActive);
}

TEST_F(TiebreakerNodeTest, AnEchoTransportThatCannotOpenFailsTheStartClearly) {
  NodeEnv env{sim_,
              children_,
              [](LogLevel, const std::string&) {},
              [](corosync::GroupBusListener&) -> Result<std::unique_ptr<corosync::GroupBus>> {
                return fail(ErrorCode::kUnavailable, "unused");
              },
              {},
              1,
              dir_ + "/a",
              0,
              [](bool, bool, ping::OnIcmp) -> Result<std::unique_ptr<ping::EchoTransport>> {
                return fail(ErrorCode::kPermissionDenied,
                            "cannot open a raw ICMP socket for [cluster.tiebreaker]: Operation "
                            "not permitted");
              },
              {},
              nullptr,
              nullptr,
              {},
              {},
              {}};
  auto node = ClusterNode::create(std::move(env), cfg_, "a", {});
  ASSERT_FALSE(node);
  EXPECT_NE(node.error().message.find("[cluster.tiebreaker]"), std::string::npos);
}

}  // namespace
}  // namespace tandem::cluster
