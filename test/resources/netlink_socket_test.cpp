// The netlink socket against the host's real rtnetlink (no root needed: only reads and requests
// the kernel ignores), on simulated time: the test reports the fd readable itself, as the loop
// would, and moves the clock to pass deadlines. Replies matched to their request, a silent kernel
// as a timeout event naming the request, a late reply dropped, dumps one at a time.
#include "netlink/netlink_socket.h"

#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>
#include <optional>
#include <vector>

#include "fakes/sim_dispatcher.h"

namespace tandem::resources::netlink {
namespace {

using namespace std::chrono_literals;

std::vector<uint8_t> message(uint16_t type, uint16_t flags, uint32_t seq) {
  struct {
    nlmsghdr h;
    ifinfomsg i;
  } m{};
  m.h.nlmsg_len = sizeof m;
  m.h.nlmsg_type = type;
  m.h.nlmsg_flags = flags;
  m.h.nlmsg_seq = seq;
  m.i.ifi_family = AF_UNSPEC;
  m.i.ifi_index = type == RTM_GETLINK && (flags & NLM_F_DUMP) != NLM_F_DUMP ? 1 : 0;  // lo
  std::vector<uint8_t> out(sizeof m);
  std::memcpy(out.data(), &m, sizeof m);
  return out;
}

// Complete at NLMSG_DONE (a dump's end) or NLMSG_ERROR (an ack), counting datagrams.
NetlinkSocket::Decoder untilDone(int& datagrams) {
  return [&datagrams](std::span<const uint8_t> d) -> Result<bool> {
    ++datagrams;
    size_t at = 0;
    while (at + sizeof(nlmsghdr) <= d.size()) {
      nlmsghdr h;
      std::memcpy(&h, d.data() + at, sizeof h);
      if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR) return true;
      if (h.nlmsg_len < sizeof h) break;
      at += NLMSG_ALIGN(h.nlmsg_len);
    }
    return false;
  };
}

class NetlinkSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = NetlinkSocket::open(sim_, NETLINK_ROUTE, "NETLINK_ROUTE");
    if (!s) GTEST_SKIP() << "SKIPPED: no rtnetlink socket here: " << s.error().message;
    socket_ = std::move(*s);
    for (int fd = 0; fd < 1024 && fd_ < 0; ++fd) {
      if (sim_.fdInterest(fd)) fd_ = fd;
    }
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override { socket_.reset(); }
  // The loop's view: the fd is readable (the kernel queued its answer inside send()).
  void readable(int times = 1) {
    for (int i = 0; i < times && socket_; ++i) sim_.fireFd(fd_, loop::FdEvents{true, false});
  }

  fakes::SimDispatcher sim_;
  std::unique_ptr<NetlinkSocket> socket_;
  int fd_ = -1;
};

TEST_F(NetlinkSocketTest, ADumpIsReadWhenTheFdIsReadableAndCompletesOnce) {
  int datagrams = 0, completions = 0;
  std::optional<Result<void>> result;
  const uint32_t seq = socket_->nextSeq();
  socket_->request(message(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, seq), seq, "list the links",
                   1000ms, untilDone(datagrams), [&](Result<void> r) {
                     ++completions;
                     result = std::move(r);
                   });
  EXPECT_EQ(completions, 0) << "never from inside request()";
  EXPECT_EQ(socket_->pending(), 1u);
  readable(20);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->has_value()) << result->error().message;
  EXPECT_EQ(completions, 1);
  EXPECT_GE(datagrams, 1);
  EXPECT_EQ(socket_->pending(), 0u);
  EXPECT_EQ(sim_.armedTimers(), 0u) << "no deadline left armed";
}

TEST_F(NetlinkSocketTest, ASilentKernelIsATimeoutEventNamingTheRequest) {
  // A control message without NLM_F_ACK: the kernel skips it and says nothing.
  int datagrams = 0;
  std::optional<Result<void>> result;
  const uint32_t seq = socket_->nextSeq();
  socket_->request(message(NLMSG_NOOP, NLM_F_REQUEST, seq), seq, "say nothing", 1000ms,
                   untilDone(datagrams), [&](Result<void> r) { result = std::move(r); });
  readable();
  sim_.advance(999ms);
  EXPECT_FALSE(result.has_value());
  sim_.advance(1ms);
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(result->has_value());
  EXPECT_EQ(result->error().code, ErrorCode::kTimeout);
  EXPECT_EQ(result->error().message, "the kernel did not answer within 1000 ms (say nothing)");
  EXPECT_EQ(socket_->pending(), 0u);
}

TEST_F(NetlinkSocketTest, AReplyAfterTheDeadlineIsDropped) {
  int datagrams = 0, completions = 0;
  std::optional<Result<void>> result;
  const uint32_t seq = socket_->nextSeq();
  socket_->request(message(RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, seq), seq, "get lo", 50ms,
                   untilDone(datagrams), [&](Result<void> r) {
                     ++completions;
                     result = std::move(r);
                   });
  sim_.advance(50ms);  // the loop was busy: the answer sits unread past the deadline
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->error().code, ErrorCode::kTimeout);
  readable(5);
  EXPECT_EQ(completions, 1);
  EXPECT_EQ(datagrams, 0) << "the late answer never reaches the decoder";
  EXPECT_GE(socket_->dropped(), 1u);
}

TEST_F(NetlinkSocketTest, DumpsRunOneAtATimeInOrder) {
  int a = 0, b = 0;
  std::vector<char> order;
  const uint32_t first = socket_->nextSeq();
  socket_->request(message(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, first), first, "first", 1000ms,
                   untilDone(a), [&](Result<void> r) {
                     EXPECT_TRUE(r.has_value());
                     order.push_back('a');
                   });
  const uint32_t second = socket_->nextSeq();
  socket_->request(message(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, second), second, "second",
                   1000ms, untilDone(b), [&](Result<void> r) {
                     EXPECT_TRUE(r.has_value()) << r.error().message;
                     order.push_back('b');
                   });
  EXPECT_EQ(socket_->pending(), 2u);
  readable(40);
  EXPECT_EQ(order, (std::vector<char>{'a', 'b'}));
}

TEST_F(NetlinkSocketTest, ADecoderErrorFailsTheRequestWithIt) {
  std::optional<Result<void>> result;
  const uint32_t seq = socket_->nextSeq();
  socket_->request(
      message(RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, seq), seq, "get lo", 1000ms,
      [](std::span<const uint8_t>) -> Result<bool> {
        return fail(ErrorCode::kParse, "bad reply from the kernel (get lo): nonsense");
      },
      [&](Result<void> r) { result = std::move(r); });
  readable();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->error().message, "bad reply from the kernel (get lo): nonsense");
}

TEST_F(NetlinkSocketTest, ACompletionMayDestroyTheSocket) {
  int datagrams = 0;
  const uint32_t seq = socket_->nextSeq();
  socket_->request(message(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, seq), seq, "list the links",
                   1000ms, untilDone(datagrams), [&](Result<void>) { socket_.reset(); });
  readable(20);
  EXPECT_EQ(socket_, nullptr);
}

// NLMSG_NOOP with NLM_F_ACK: the kernel answers with a bare ack, a datagram of its own.
std::vector<uint8_t> noopAck(uint32_t seq) {
  return message(NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, seq);
}

TEST_F(NetlinkSocketTest, CorkedRequestsGoOutInOneSendAndEachIsAnsweredAlone) {
  const uint64_t sends = socket_->sends();
  std::vector<int> done;
  int datagrams = 0;
  socket_->cork();
  for (int i = 0; i < 5; ++i) {
    const uint32_t seq = socket_->nextSeq();
    socket_->request(noopAck(seq), seq, "noop", 1000ms, untilDone(datagrams),
                     [&, i](Result<void> r) {
                       EXPECT_TRUE(r.has_value()) << r.error().message;
                       done.push_back(i);
                     });
  }
  EXPECT_EQ(socket_->sends(), sends) << "nothing goes out while corked";
  EXPECT_EQ(socket_->pending(), 5u);
  socket_->uncork();
  EXPECT_EQ(socket_->sends(), sends + 1) << "one datagram for the five";
  readable(10);
  EXPECT_EQ(done, (std::vector<int>{0, 1, 2, 3, 4})) << "each answered, in order";
  EXPECT_EQ(datagrams, 5) << "one ack datagram each";
  EXPECT_EQ(socket_->pending(), 0u);
}

TEST_F(NetlinkSocketTest, ABatchHoldsAtMostKBatchMessages) {
  const uint64_t sends = socket_->sends();
  const size_t n = 2 * NetlinkSocket::kBatchMessages + 3;
  size_t ok = 0;
  int datagrams = 0;
  socket_->cork();
  socket_->cork();  // nested: only the outer uncork sends
  for (size_t i = 0; i < n; ++i) {
    const uint32_t seq = socket_->nextSeq();
    socket_->request(noopAck(seq), seq, "noop", 1000ms, untilDone(datagrams),
                     [&](Result<void> r) { ok += r.has_value(); });
  }
  EXPECT_EQ(socket_->sends(), sends + 2) << "each full batch went out as it filled";
  socket_->uncork();
  EXPECT_EQ(socket_->sends(), sends + 2);
  socket_->uncork();
  EXPECT_EQ(socket_->sends(), sends + 3);
  readable(20);
  EXPECT_EQ(ok, n);
}

TEST_F(NetlinkSocketTest, ADumpMadeWhileCorkedGoesAfterWhatWasGathered) {
  std::vector<char> order;
  int a = 0, b = 0;
  socket_->cork();
  const uint32_t first = socket_->nextSeq();
  socket_->request(noopAck(first), first, "noop", 1000ms, untilDone(a),
                   [&](Result<void>) { order.push_back('a'); });
  const uint64_t sends = socket_->sends();
  const uint32_t second = socket_->nextSeq();
  socket_->request(message(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, second), second, "list", 1000ms,
                   untilDone(b), [&](Result<void>) { order.push_back('b'); });
  EXPECT_EQ(socket_->sends(), sends + 2) << "the gathered request, then the dump";
  socket_->uncork();
  EXPECT_EQ(socket_->sends(), sends + 2);
  readable(40);
  EXPECT_EQ(order, (std::vector<char>{'a', 'b'}));
}

// The requests that completions make while replies are read (the next of a plan) go out
// together when the reading stops.
TEST_F(NetlinkSocketTest, RequestsMadeByCompletionsGoOutTogether) {
  int datagrams = 0;
  size_t followers = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t seq = socket_->nextSeq();
    socket_->request(noopAck(seq), seq, "noop", 1000ms, untilDone(datagrams), [&](Result<void>) {
      const uint32_t next = socket_->nextSeq();
      socket_->request(noopAck(next), next, "next", 1000ms, untilDone(datagrams),
                       [&](Result<void> r) { followers += r.has_value(); });
    });
  }
  const uint64_t sends = socket_->sends();
  readable();  // reads the four acks in one wake
  EXPECT_EQ(socket_->sends(), sends + 1) << "the four requests they made, in one datagram";
  readable();
  EXPECT_EQ(followers, 4u);
}

TEST(NetlinkRoute, ADatagramIsRoutedByItsFirstHeaderOrRefused) {
  std::vector<uint8_t> m = message(RTM_GETLINK, NLM_F_REQUEST, 42);
  auto r = routeDatagram(m);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->seq, 42u);
  EXPECT_FALSE(routeDatagram(std::span<const uint8_t>(m.data(), 8)).has_value());
  m[0] = 0xff;  // nlmsg_len beyond the datagram
  EXPECT_EQ(routeDatagram(m).error().code, ErrorCode::kParse);
}

}  // namespace
}  // namespace tandem::resources::netlink
