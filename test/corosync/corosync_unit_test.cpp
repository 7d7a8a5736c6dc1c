// The pure parts of the corosync module and the cs_error_t boundary; no corosync involved.
#include <corosync/cpg.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "corosync/backoff.h"
#include "corosync/cpg_bus.h"
#include "corosync/cs_error.h"
#include "corosync/group_bus.h"
#include "corosync/nodelist.h"
#include "corosync/outbound_queue.h"
#include "corosync/reconnect_timer.h"
#include "fakes/sim_dispatcher.h"

namespace tandem::corosync {
namespace {

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

TEST(Backoff, DoublesFromTheInitialDelayUpToTheCap) {
  Backoff b(Millis(100), Millis(2000));
  std::vector<Millis> got;
  for (int i = 0; i < 7; ++i) got.push_back(b.next());
  EXPECT_EQ(got, (std::vector<Millis>{Millis(100), Millis(200), Millis(400), Millis(800),
                                      Millis(1600), Millis(2000), Millis(2000)}));
  b.reset();
  EXPECT_EQ(b.next(), Millis(100));
}

TEST(Backoff, ACapBelowTheInitialDelayIsRaisedToIt) {
  Backoff b(Millis(500), Millis(100));
  EXPECT_EQ(b.next(), Millis(500));
  EXPECT_EQ(b.next(), Millis(500));
}

TEST(ReconnectTimer, RetriesFromTheDispatcherWithBackoffAndStartsOverAfterSuccess) {
  fakes::SimDispatcher d;
  int attempts = 0;
  {
    ReconnectTimer t(d, Millis(100), Millis(2000), [&] { ++attempts; });
    t.attemptSoon();
    d.advance(Millis(0));
    EXPECT_EQ(attempts, 1);
    EXPECT_EQ(t.retryLater(), Millis(100));
    d.advance(Millis(99));
    EXPECT_EQ(attempts, 1);
    d.advance(Millis(1));
    EXPECT_EQ(attempts, 2);
    EXPECT_EQ(t.retryLater(), Millis(200));
    t.succeeded();
    EXPECT_FALSE(t.pending());
    d.advance(Millis(1000));
    EXPECT_EQ(attempts, 2);
    EXPECT_EQ(t.retryLater(), Millis(100));
  }
}

TEST(OutboundQueue, KeepsSendOrder) {
  OutboundQueue q({.max_messages = 4, .max_bytes = 100});
  ASSERT_TRUE(q.push(bytes("a")));
  ASSERT_TRUE(q.push(bytes("bb")));
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.bytes(), 3u);
  EXPECT_EQ(q.front(), bytes("a"));
  q.pop();
  EXPECT_EQ(q.front(), bytes("bb"));
  EXPECT_EQ(q.bytes(), 2u);
}

TEST(OutboundQueue, RefusesPastTheMessageLimitWithAClearError) {
  OutboundQueue q({.max_messages = 2, .max_bytes = 100});
  ASSERT_TRUE(q.push(bytes("a")));
  ASSERT_TRUE(q.push(bytes("b")));
  auto r = q.push(bytes("c"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kTryAgain);
  EXPECT_NE(r.error().message.find("send queue full"), std::string::npos) << r.error().message;
  EXPECT_EQ(q.size(), 2u);
}

TEST(OutboundQueue, RefusesPastTheByteLimit) {
  OutboundQueue q({.max_messages = 10, .max_bytes = 5});
  ASSERT_TRUE(q.push(bytes("abcd")));
  EXPECT_FALSE(q.push(bytes("ef")));
  EXPECT_TRUE(q.push(bytes("e")));
}

TEST(OutboundQueue, ClearSaysHowManyItDiscarded) {
  OutboundQueue q({});
  ASSERT_TRUE(q.push(bytes("a")));
  ASSERT_TRUE(q.push(bytes("b")));
  EXPECT_EQ(q.clear(), 2u);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
}

TEST(CpgReasons, DaemonDeparturesAreToldApartFromNodeDepartures) {
  EXPECT_EQ(changeReasonFromCpg(CPG_REASON_JOIN), ChangeReason::kJoin);
  EXPECT_EQ(changeReasonFromCpg(CPG_REASON_LEAVE), ChangeReason::kLeave);
  EXPECT_EQ(changeReasonFromCpg(CPG_REASON_PROCDOWN), ChangeReason::kProcessDown);
  EXPECT_EQ(changeReasonFromCpg(CPG_REASON_NODEUP), ChangeReason::kNodeUp);
  EXPECT_EQ(changeReasonFromCpg(CPG_REASON_NODEDOWN), ChangeReason::kNodeDown);
  EXPECT_EQ(changeReasonFromCpg(CPG_REASON_UNDEFINED), ChangeReason::kUnknown);
  EXPECT_EQ(changeReasonFromCpg(77), ChangeReason::kUnknown);

  EXPECT_EQ(departureOf(ChangeReason::kLeave), Departure::kDaemonOnly);
  EXPECT_EQ(departureOf(ChangeReason::kProcessDown), Departure::kDaemonOnly);
  EXPECT_EQ(departureOf(ChangeReason::kNodeDown), Departure::kWholeNode);
  EXPECT_EQ(departureOf(ChangeReason::kUnknown), Departure::kUnknown);
  EXPECT_EQ(changeReasonName(ChangeReason::kProcessDown), "process-down");
}

TEST(CsError, NamesTheCorosyncErrorAndMapsItIntoTheProjectErrorSpace) {
  Error e = csError(CS_ERR_TRY_AGAIN, "cpg_join(tandem)");
  EXPECT_EQ(e.code, ErrorCode::kTryAgain);
  EXPECT_EQ(e.message, "cpg_join(tandem): CS_ERR_TRY_AGAIN (6)");
  EXPECT_EQ(csError(CS_ERR_LIBRARY, "cpg_dispatch").code, ErrorCode::kUnavailable);
  EXPECT_EQ(csError(CS_ERR_EXIST, "cpg_join").code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(csError(CS_ERR_NOT_EXIST, "x").code, ErrorCode::kNotFound);
  EXPECT_EQ(csError(CS_ERR_ACCESS, "x").code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(csError(static_cast<cs_error_t>(99), "x").message, "x: CS_ERR_99 (99)");
}

TEST(CsError, OkIsOneNotZero) {
  EXPECT_EQ(static_cast<int>(CS_OK), 1);
  EXPECT_EQ(csErrorName(CS_OK), "CS_OK");
  EXPECT_TRUE(csConnectionGone(CS_ERR_LIBRARY));
  EXPECT_TRUE(csConnectionGone(CS_ERR_BAD_HANDLE));
  EXPECT_FALSE(csConnectionGone(CS_ERR_TRY_AGAIN));
  EXPECT_FALSE(csConnectionGone(CS_OK));
}

TEST(Nodelist, IsBuiltFromCmapKeysInNumericIndexOrder) {
  std::map<std::string, std::string> keys = {
      {"nodelist.node.0.nodeid", "1"},
      {"nodelist.node.0.name", "lb1"},
      {"nodelist.node.0.ring0_addr", "198.51.100.1"},
      {"nodelist.node.0.ring1_addr", "203.0.113.1"},  // not used by tandem
      {"nodelist.node.10.nodeid", "11"},
      {"nodelist.node.10.ring0_addr", "lb11.example"},
      {"nodelist.node.2.nodeid", "3"},
      {"nodelist.node.2.name", "lb3"},
      {"nodelist.local_node_pos", "0"},  // not a node
  };
  auto nodes = parseNodelist(keys);
  ASSERT_TRUE(nodes) << nodes.error().message;
  EXPECT_EQ(*nodes, (std::vector<NodelistEntry>{
                        {1, "lb1", "198.51.100.1"}, {3, "lb3", ""}, {11, "", "lb11.example"}}));
}

TEST(Nodelist, ANodeWithoutAValidNodeidIsAnError) {
  auto missing = parseNodelist({{"nodelist.node.0.name", "lb1"}});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kParse);
  EXPECT_NE(missing.error().message.find("nodelist.node.0 has no nodeid"), std::string::npos);
  EXPECT_FALSE(parseNodelist({{"nodelist.node.0.nodeid", "zero"}}));
  EXPECT_FALSE(parseNodelist({{"nodelist.node.0.nodeid", "0"}}));
  EXPECT_FALSE(parseNodelist({{"nodelist.node.0.nodeid", "4294967296"}}));
}

TEST(Nodelist, ADuplicateNodeidIsAnError) {
  auto r = parseNodelist({{"nodelist.node.0.nodeid", "1"}, {"nodelist.node.1.nodeid", "1"}});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("used twice"), std::string::npos) << r.error().message;
}

TEST(Nodelist, NodeNameFallsBackToRing0AddrLikeCorosync) {
  std::vector<NodelistEntry> nodes = {{1, "lb1", "198.51.100.1"}, {2, "", "198.51.100.2"}};
  EXPECT_EQ(nodeNameFor(nodes, 1), "lb1");
  EXPECT_EQ(nodeNameFor(nodes, 2), "198.51.100.2");
  EXPECT_EQ(nodeNameFor(nodes, 3), std::nullopt);
}

class NullListener final : public GroupBusListener {
 public:
  void onMessage(uint32_t, uint32_t, std::span<const uint8_t>) override {}
  void onGroupChange(const GroupChange&) override {}
  void onMembership(const RingMembership&) override {}
  void onConnected() override {}
  void onConnectionLost(const Error&, size_t) override {}
};

TEST(CpgBus, RefusesAGroupNameCorosyncCannotCarry) {
  fakes::SimDispatcher d;
  NullListener l;
  EXPECT_FALSE(CpgBus::create(d, l, ""));
  auto long_name = CpgBus::create(d, l, std::string(128, 'g'));
  ASSERT_FALSE(long_name);
  EXPECT_EQ(long_name.error().code, ErrorCode::kInvalidArgument);
  CpgBusOptions no_queue;
  no_queue.queue = {0, 10};
  EXPECT_FALSE(CpgBus::create(d, l, "g", no_queue));
  // Valid options: nothing touches corosync until the dispatcher runs the first attempt.
  auto ok = CpgBus::create(d, l, std::string(127, 'g'));
  ASSERT_TRUE(ok);
  EXPECT_FALSE((*ok)->connected());
  EXPECT_FALSE((*ok)->send(bytes("x")));
}

}  // namespace
}  // namespace tandem::corosync
