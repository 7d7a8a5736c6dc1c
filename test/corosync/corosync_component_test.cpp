// CpgBus, QuorumWatch and the cmap reads against a real corosync 3 (knet, one node on lo),
// started by the test inside network and mount namespaces of its own. Needs root; prints
// "SKIPPED: <reason>" and succeeds where that is not available.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "corosync/cmap_nodelist.h"
#include "corosync/cpg_bus.h"
#include "corosync/quorum_watch.h"
#include "corosync_lab.h"
#include "cpg_peer.h"
#include "loop/qb_dispatcher.h"

namespace tandem::corosync::test {
namespace {

loop::QbDispatcher* g_dispatcher = nullptr;
CorosyncLab* g_lab = nullptr;

constexpr const char* kGroup = "tandem-test";

double msBetween(loop::MonoTime a, loop::MonoTime b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Runs the real loop until done() holds, checking every few milliseconds; false after the
// deadline. The events themselves are timestamped in the callbacks, not here.
bool runUntil(const std::function<bool()>& done, Millis timeout = Millis(10'000)) {
  if (done()) return true;
  loop::Dispatcher& d = *g_dispatcher;
  const loop::MonoTime deadline = d.now() + timeout;
  bool ok = false;
  std::unique_ptr<loop::Timer> tick;
  tick = d.createTimer([&] {
    if (done()) {
      ok = true;
      d.stop();
    } else if (d.now() >= deadline) {
      d.stop();
    } else {
      tick->arm(Millis(2));
    }
  });
  tick->arm(Millis(2));
  d.run();
  return ok;
}

std::span<const uint8_t> bytesOf(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

struct Received {
  uint32_t nodeid;
  uint32_t pid;
  std::string text;
  loop::MonoTime at;
};

struct Departed {
  MemberChange change;
  loop::MonoTime at;
};

class RecordingListener final : public GroupBusListener {
 public:
  void onMessage(uint32_t nodeid, uint32_t pid, std::span<const uint8_t> bytes) override {
    messages.push_back({nodeid, pid, std::string(bytes.begin(), bytes.end()), g_dispatcher->now()});
  }
  void onGroupChange(const GroupChange& change) override {
    changes.push_back(change);
    for (const auto& l : change.left) left.push_back({l, g_dispatcher->now()});
  }
  void onMembership(const RingMembership& ring) override { rings.push_back(ring); }
  void onConnected() override { ++connected; }
  void onConnectionLost(const Error& cause, size_t discarded) override {
    lost.push_back(cause);
    discarded_total += discarded;
  }
  void onConnectFailed(const Error& cause, Millis) override { connect_failures.push_back(cause); }

  bool isMember(uint32_t pid) const {
    if (changes.empty()) return false;
    const auto& m = changes.back().members;
    return std::any_of(m.begin(), m.end(), [&](const GroupMember& g) { return g.pid == pid; });
  }
  const Departed* departure(uint32_t pid) const {
    for (const auto& d : left) {
      if (d.change.member.pid == pid) return &d;
    }
    return nullptr;
  }
  const Received* message(uint32_t pid, const std::string& text) const {
    for (const auto& m : messages) {
      if (m.pid == pid && m.text == text) return &m;
    }
    return nullptr;
  }

  std::vector<Received> messages;
  std::vector<GroupChange> changes;
  std::vector<Departed> left;
  std::vector<RingMembership> rings;
  std::vector<Error> lost;
  std::vector<Error> connect_failures;
  size_t discarded_total = 0;
  int connected = 0;
};

class RecordingQuorum final : public QuorumListener {
 public:
  void onQuorum(bool q) override { reports.push_back(q); }
  void onConnected() override { ++connected; }
  void onConnectionLost(const Error& cause) override { lost.push_back(cause); }
  std::vector<bool> reports;
  std::vector<Error> lost;
  int connected = 0;
};

const uint32_t my_pid = static_cast<uint32_t>(::getpid());

class RealCorosync : public ::testing::Test {
 protected:
  void SetUp() override {
    auto bus = CpgBus::create(*g_dispatcher, listener_, kGroup);
    ASSERT_TRUE(bus) << bus.error().message;
    bus_ = std::move(*bus);
    // A bus of the previous test may still be leaving under this same pid: the join is then
    // refused with CS_ERR_EXIST and retried, which is the behaviour under test anyway.
    ASSERT_TRUE(runUntil([&] { return bus_->connected() && listener_.isMember(my_pid); }))
        << "bus did not join; last failure: "
        << (listener_.connect_failures.empty() ? "none" : listener_.connect_failures.back().message)
        << "\n"
        << g_lab->logTail(15);
  }

  std::unique_ptr<PeerProcess> startPeer() {
    auto peer = PeerProcess::spawn(*g_dispatcher, kGroup);
    EXPECT_TRUE(peer) << peer.error().message;
    if (!peer) return nullptr;
    auto p = std::move(*peer);
    uint32_t pid = static_cast<uint32_t>(p->pid());
    EXPECT_TRUE(runUntil([&] { return p->saw("ready") && listener_.isMember(pid); }))
        << "peer did not join; its lines:\n"
        << joinLines(*p);
    return p;
  }

  static std::string joinLines(const PeerProcess& p) {
    std::string s;
    for (const auto& l : p.lines()) s += "  " + l + "\n";
    return s;
  }

  RecordingListener listener_;
  std::unique_ptr<CpgBus> bus_;
};

TEST_F(RealCorosync, TwoDaemonsOnOneNodeSeeEachOtherJoinAndExchangeMessages) {
  EXPECT_EQ(bus_->localNodeId(), CorosyncLab::kNodeId);
  ASSERT_FALSE(listener_.changes.empty());
  EXPECT_TRUE(listener_.changes.front().first_since_connect);
  ASSERT_FALSE(listener_.rings.empty()) << "no initial totem membership";
  EXPECT_EQ(listener_.rings.back().nodeids, std::vector<uint32_t>{CorosyncLab::kNodeId});

  auto peer = startPeer();
  ASSERT_TRUE(peer);
  const uint32_t peer_pid = static_cast<uint32_t>(peer->pid());
  bool saw_join = false;
  for (const auto& c : listener_.changes) {
    for (const auto& j : c.joined) {
      if (j.member.pid == peer_pid) {
        saw_join = true;
        EXPECT_EQ(j.reason, ChangeReason::kJoin);
        EXPECT_EQ(j.member.nodeid, CorosyncLab::kNodeId);
      }
    }
  }
  EXPECT_TRUE(saw_join);

  ASSERT_TRUE(bus_->send(bytesOf("ping-from-test")));
  const std::string peer_saw = "msg 1 " + std::to_string(my_pid) + " ping-from-test";
  EXPECT_TRUE(runUntil([&] {
    return peer->saw(peer_saw) && listener_.message(my_pid, "ping-from-test") != nullptr;
  })) << joinLines(*peer);

  ASSERT_TRUE(peer->command("send pong-from-peer"));
  EXPECT_TRUE(runUntil([&] { return listener_.message(peer_pid, "pong-from-peer") != nullptr; }));
  EXPECT_EQ(listener_.message(peer_pid, "pong-from-peer")->nodeid, CorosyncLab::kNodeId);
}

TEST_F(RealCorosync, DaemonThatFinalizesIsSeenLeavingWhileItsNodeStays) {
  auto peer = startPeer();
  ASSERT_TRUE(peer);
  const uint32_t peer_pid = static_cast<uint32_t>(peer->pid());
  const loop::MonoTime quit_at = g_dispatcher->now();
  ASSERT_TRUE(peer->command("quit"));
  ASSERT_TRUE(runUntil([&] { return listener_.departure(peer_pid) != nullptr; }))
      << joinLines(*peer);
  const Departed* d = listener_.departure(peer_pid);
  EXPECT_EQ(departureOf(d->change.reason), Departure::kDaemonOnly)
      << "reason " << changeReasonName(d->change.reason);
  EXPECT_FALSE(listener_.isMember(peer_pid));
  EXPECT_TRUE(listener_.isMember(my_pid));
  std::printf("MEASURED clean finalize: 'quit' sent -> leave seen in %.1f ms (reason %s)\n",
              msBetween(quit_at, d->at), std::string(changeReasonName(d->change.reason)).c_str());
  EXPECT_TRUE(runUntil([&] { return peer->tryReap(); }));
}

// LAB-NOTES left this open: how fast do the others see a member process that crashes while
// its corosync keeps running? Through the closed IPC socket (PROCDOWN), not through the token:
// the reason says which; the time is shown, and judged only against the token it must not wait
// for, with a margin for a loaded machine.
TEST_F(RealCorosync, KilledDaemonIsSeenAsProcessDownWithoutWaitingForTheToken) {
  constexpr double kLoadMarginMs = 1500;
  constexpr int kRuns = 5;
  std::vector<double> ms;
  for (int run = 0; run < kRuns; ++run) {
    auto peer = startPeer();
    ASSERT_TRUE(peer);
    const uint32_t peer_pid = static_cast<uint32_t>(peer->pid());
    const loop::MonoTime killed_at = g_dispatcher->now();
    ASSERT_TRUE(peer->kill(SIGKILL));
    ASSERT_TRUE(runUntil([&] { return listener_.departure(peer_pid) != nullptr; }, Millis(15'000)))
        << "run " << run << ": no departure seen";
    const Departed* d = listener_.departure(peer_pid);
    EXPECT_EQ(d->change.reason, ChangeReason::kProcessDown)
        << "reason " << changeReasonName(d->change.reason);
    EXPECT_EQ(departureOf(d->change.reason), Departure::kDaemonOnly);
    ms.push_back(msBetween(killed_at, d->at));
    EXPECT_TRUE(runUntil([&] { return peer->tryReap(); }));
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  std::string all;
  for (double v : ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.1f", all.empty() ? "" : " ", v);
    all += buf;
  }
  std::printf(
      "MEASURED kill -9 of a CPG member -> PROCDOWN leave seen by another member on the "
      "same node: runs=%d min=%.1f ms max=%.1f ms (all: %s)\n",
      kRuns, sorted.front(), sorted.back(), all.c_str());
  RecordProperty("kill9_leave_ms_min", std::to_string(sorted.front()));
  RecordProperty("kill9_leave_ms_max", std::to_string(sorted.back()));
  for (size_t run = 0; run < ms.size(); ++run) {
    EXPECT_LT(ms[run], CorosyncLab::kTokenMs + kLoadMarginMs)
        << "run " << run << ": the leave took " << ms[run] << " ms > token "
        << CorosyncLab::kTokenMs << " ms + " << kLoadMarginMs << " ms load margin";
  }
}

TEST_F(RealCorosync, SecondBusInTheSameProcessIsRefusedAndKeepsRetrying) {
  RecordingListener second;
  auto bus = CpgBus::create(*g_dispatcher, second, kGroup);
  ASSERT_TRUE(bus);
  ASSERT_TRUE(runUntil([&] { return !second.connect_failures.empty(); }));
  EXPECT_FALSE((*bus)->connected());
  EXPECT_EQ(second.connect_failures.front().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(second.connect_failures.front().message.find("CS_ERR_EXIST"), std::string::npos)
      << second.connect_failures.front().message;
  EXPECT_FALSE((*bus)->send(bytesOf("nope")));
}

TEST_F(RealCorosync, SendsRefusedUnderFlowControlAreQueuedAndDeliveredInOrder) {
  // Corosync refuses multicasts with CS_ERR_TRY_AGAIN once its totem send queue is full.
  // Small messages never get there: each send is a round trip, and corosync buffers deliveries
  // to a client that does not read them without pushing back. 100 kB ones sent back to back
  // (one buffer, no allocation between sends: under ASan a fresh 100 kB string per send is
  // slow enough for totem to keep up) fill it, after about 1,500 here (it was a few dozen once).
  // The bus has to queue them, not block or drop them. One CI run passed 2,000 sends in 0.3 s
  // without a refusal: up to 20,000 (about 3 s at that pace) before calling it a failure.
  constexpr size_t kLimit = 8;
  constexpr size_t kSize = 100'000;
  constexpr size_t kMaxSends = 20'000;
  RecordingListener flooded;
  CpgBusOptions options;
  options.queue = {kLimit, 64 << 20};  // the count limit is the one to hit
  auto created = CpgBus::create(*g_dispatcher, flooded, "tandem-flood", options);
  ASSERT_TRUE(created);
  auto& bus = *created;
  ASSERT_TRUE(runUntil([&] { return bus->connected() && flooded.isMember(my_pid); }));
  // The first 8 bytes carry the sequence number, in place.
  auto numbered = [](std::string& buf, size_t i) {
    for (size_t d = 8; d-- > 0; i /= 10) buf[d] = static_cast<char>('0' + i % 10);
  };
  std::string message(kSize, 'x');
  size_t accepted = 0;
  size_t max_queued = 0;
  std::optional<Error> refusal;
  for (size_t i = 0; i < kMaxSends && !refusal; ++i) {
    numbered(message, i);
    auto r = bus->send(bytesOf(message));
    if (r) {
      ++accepted;
      max_queued = std::max(max_queued, bus->queuedMessages());
    } else {
      refusal = r.error();
    }
  }
  std::printf("flow control: %zu sends accepted before the queue (limit %zu) filled\n", accepted,
              kLimit);
  ASSERT_TRUE(refusal) << "corosync never applied flow control";
  EXPECT_EQ(refusal->code, ErrorCode::kTryAgain) << refusal->message;
  EXPECT_NE(refusal->message.find("send queue full"), std::string::npos) << refusal->message;
  EXPECT_EQ(max_queued, kLimit);

  ASSERT_TRUE(runUntil([&] { return flooded.messages.size() >= accepted; }, Millis(60'000)))
      << flooded.messages.size() << " of " << accepted << " delivered";
  EXPECT_EQ(bus->queuedMessages(), 0u);
  for (size_t i = 0; i < accepted; ++i) {
    numbered(message, i);
    // Not ASSERT_EQ: a mismatch would print two 100 kB strings.
    ASSERT_TRUE(flooded.messages[i].text == message) << "out of order or corrupted at " << i;
  }
}

TEST_F(RealCorosync, QuorumWatchReportsQuorate) {
  RecordingQuorum q;
  auto watch = QuorumWatch::create(*g_dispatcher, q);
  ASSERT_TRUE(watch);
  ASSERT_TRUE(runUntil([&] { return !q.reports.empty(); }));
  EXPECT_EQ(q.connected, 1);
  EXPECT_EQ(q.reports, std::vector<bool>{true});
  EXPECT_EQ((*watch)->quorate(), true);
}

TEST_F(RealCorosync, CmapReturnsTheNodelistAndTheEffectiveToken) {
  auto config = readCorosyncConfig();
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->nodes.size(), 1u);
  EXPECT_EQ(config->nodes[0].nodeid, CorosyncLab::kNodeId);
  EXPECT_EQ(config->nodes[0].name, CorosyncLab::kNodeName);
  EXPECT_EQ(config->nodes[0].ring0_addr, "127.0.0.1");
  EXPECT_EQ(config->token, Millis(CorosyncLab::kTokenMs));
  EXPECT_EQ(config->consensus, Millis(CorosyncLab::kTokenMs * 12 / 10));  // corosync's default
  EXPECT_EQ(nodeNameFor(config->nodes, *bus_->localNodeId()), CorosyncLab::kNodeName);

  auto nodes = readNodelist();
  ASSERT_TRUE(nodes) << nodes.error().message;
  EXPECT_EQ(*nodes, config->nodes);
  auto token = readTotemToken();
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(*token, config->token);
}

// Last: it restarts corosync under every client.
TEST_F(RealCorosync, BusAndQuorumReconnectOnTheirOwnAfterCorosyncRestarts) {
  RecordingQuorum q;
  auto watch = QuorumWatch::create(*g_dispatcher, q);
  ASSERT_TRUE(watch);
  ASSERT_TRUE(runUntil([&] { return (*watch)->quorate() == true; }));
  auto peer = startPeer();
  ASSERT_TRUE(peer);
  const uint32_t peer_pid = static_cast<uint32_t>(peer->pid());

  ASSERT_TRUE(g_lab->signal(SIGTERM));
  const loop::MonoTime term_at = g_dispatcher->now();
  ASSERT_TRUE(runUntil([&] { return !listener_.lost.empty(); })) << "no onConnectionLost";
  const double lost_ms = msBetween(term_at, g_dispatcher->now());
  EXPECT_FALSE(bus_->connected());
  auto refused = bus_->send(bytesOf("into-the-void"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  ASSERT_TRUE(runUntil([&] { return !q.lost.empty() && peer->saw("lost"); }));
  EXPECT_EQ((*watch)->quorate(), std::nullopt);
  ASSERT_TRUE(runUntil([&] { return g_lab->tryReap(); }, Millis(15'000))) << "corosync lingers";
  std::printf("corosync SIGTERM: onConnectionLost after %.1f ms (%s); process gone after %.1f ms\n",
              lost_ms, listener_.lost.front().message.c_str(),
              msBetween(term_at, g_dispatcher->now()));

  const int connects_before = listener_.connected;
  const size_t changes_before = listener_.changes.size();
  auto started = g_lab->start(Millis(15'000));
  ASSERT_TRUE(started) << started.error().message;
  const loop::MonoTime restarted_at = g_dispatcher->now();
  // Back without help: rejoined, both daemons in the first view, quorum known again.
  ASSERT_TRUE(runUntil(
      [&] {
        return listener_.connected > connects_before && listener_.changes.size() > changes_before &&
               listener_.isMember(my_pid) && listener_.isMember(peer_pid) && q.connected >= 2 &&
               (*watch)->quorate() == true;
      },
      Millis(20'000)))
      << joinLines(*peer) << g_lab->logTail(20);
  std::printf(
      "corosync restart: bus rejoined and saw the peer %.1f ms after corosync served "
      "clients again (%zu failed attempts in all)\n",
      msBetween(restarted_at, g_dispatcher->now()), listener_.connect_failures.size());
  EXPECT_TRUE(listener_.changes[changes_before].first_since_connect);
  // Its stdout may trail its rejoin, which the bus already saw.
  EXPECT_TRUE(runUntil([&] { return peer->count("connected 1 ") == 2; })) << joinLines(*peer);

  ASSERT_TRUE(bus_->send(bytesOf("after-restart")));
  ASSERT_TRUE(peer->command("send peer-after-restart"));
  EXPECT_TRUE(runUntil([&] {
    return listener_.message(peer_pid, "peer-after-restart") != nullptr &&
           peer->saw("msg 1 " + std::to_string(my_pid) + " after-restart");
  })) << joinLines(*peer);
}

}  // namespace
}  // namespace tandem::corosync::test

int main(int argc, char** argv) {
  using namespace tandem::corosync::test;
  if (argc == 3 && argv[1] == kPeerFlag) return runCpgPeer(argv[2]);

  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  if (auto reason = labUnavailableReason()) {
    std::printf("SKIPPED: %s\n", reason->c_str());
    return 0;
  }
  // Before anything else runs: unshare(CLONE_NEWNS) needs a single-threaded process.
  if (auto r = enterPrivateNamespaces(); !r) {
    if (r.error().code == tandem::ErrorCode::kPermissionDenied) {
      std::printf("SKIPPED: cannot create private namespaces: %s\n", r.error().message.c_str());
      return 0;
    }
    std::fprintf(stderr, "lab setup failed: %s\n", r.error().message.c_str());
    return 1;
  }
  auto dispatcher = tandem::loop::QbDispatcher::create();
  if (!dispatcher) {
    std::fprintf(stderr, "dispatcher: %s\n", dispatcher.error().message.c_str());
    return 1;
  }
  g_dispatcher = dispatcher->get();
  int rc = 1;
  {
    CorosyncLab lab("/usr/sbin/corosync");
    g_lab = &lab;
    auto started = lab.start(tandem::Millis(15'000));
    if (!started) {
      std::fprintf(stderr, "corosync did not start: %s\n", started.error().message.c_str());
      return 1;
    }
    rc = RUN_ALL_TESTS();
    g_lab = nullptr;
  }  // stops corosync
  g_dispatcher = nullptr;
  return rc;
}
