// The prober on simulated time with a fake network: rounds, matching, and the verdict.
#include "ping/pinger.h"

#include <gtest/gtest.h>

#include "fake_echo.h"
#include "fakes/sim_dispatcher.h"

namespace tandem::ping {
namespace {

using namespace std::chrono_literals;

const IpAddress kGw = *IpAddress::parse("198.51.100.100");
const IpAddress kGw6 = *IpAddress::parse("2001:db8::100");

class PingerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Pinger> make(std::vector<IpAddress> targets, Millis interval, Millis timeout) {
    config::Tiebreaker cfg{std::move(targets), interval, timeout};
    auto p = Pinger::create(sim_, cfg, 0x0123456789abcdefULL, net_.transportFor("a"),
                            [this](const ReachChange& c) { changes_.push_back(c); });
    EXPECT_TRUE(p);
    return std::move(*p);
  }

  fakes::SimDispatcher sim_;
  fakes::FakeEchoNet net_{sim_, 2ms};
  std::vector<ReachChange> changes_;
};

TEST_F(PingerTest, SendsOneRequestPerTargetEachIntervalFromTheStart) {
  auto p = make({kGw, kGw6}, 1000ms, 1000ms);
  EXPECT_TRUE(net_.sent().empty());
  p->start();
  sim_.advance(0ms);
  ASSERT_EQ(net_.sent().size(), 2u);
  EXPECT_EQ(net_.sent()[0].to, kGw);
  EXPECT_EQ(net_.sent()[0].icmp[0], kEchoRequestV4);
  EXPECT_EQ(net_.sent()[1].to, kGw6);
  EXPECT_EQ(net_.sent()[1].icmp[0], kEchoRequestV6);
  // The same identifier, sequence and payload in both families.
  EXPECT_TRUE(std::equal(net_.sent()[0].icmp.begin() + 4, net_.sent()[0].icmp.end(),
                         net_.sent()[1].icmp.begin() + 4, net_.sent()[1].icmp.end()));
  sim_.advance(2ms);
  ASSERT_EQ(changes_.size(), 1u);
  EXPECT_EQ(changes_[0].to, Reach::kReached);
  sim_.advance(2998ms);
  EXPECT_EQ(net_.sent().size(), 8u);  // rounds at 0, 1, 2 and 3 s
  EXPECT_EQ(changes_.size(), 1u);
  EXPECT_EQ(p->replies(), 6u);  // the 3 s round's replies are still in flight
}

TEST_F(PingerTest, LosesWithinIntervalPlusTimeoutAndRegainsWithTheNextAnswer) {
  auto p = make({kGw}, 200ms, 300ms);
  p->start();
  sim_.advance(1000ms);
  ASSERT_EQ(p->state(), Reach::kReached);
  // At 1000 ms, just after that round went out (and was answered): the 1200 ms round is the
  // first to go unanswered, and its timeout ends at 1500 ms, interval + timeout after the cut.
  net_.cut("a");
  sim_.advance(499ms);
  EXPECT_EQ(p->state(), Reach::kReached);
  sim_.advance(1ms);
  ASSERT_EQ(p->state(), Reach::kLost);
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[1].detail, "none of 198.51.100.100 answered within 300ms");
  net_.restore("a");  // at 1500 ms; the next round goes out at 1600 ms, answered at 1602 ms
  sim_.advance(101ms);
  EXPECT_EQ(p->state(), Reach::kLost);
  sim_.advance(1ms);
  EXPECT_EQ(p->state(), Reach::kReached);
  ASSERT_EQ(changes_.size(), 3u);
  EXPECT_EQ(changes_[2].from, Reach::kLost);
}

TEST_F(PingerTest, IgnoresRepliesThatAreNotOurs) {
  std::optional<OnIcmp> deliver;
  MakeEchoTransport capture = [&](bool, bool, OnIcmp on) -> Result<std::unique_ptr<EchoTransport>> {
    deliver = on;
    return net_.transportFor("a")(true, false, [](const IpAddress&, std::span<const uint8_t>) {});
  };
  config::Tiebreaker cfg{{kGw}, 1000ms, 1000ms};
  auto p = Pinger::create(sim_, cfg, 0x0123456789abcdefULL, capture,
                          [this](const ReachChange& c) { changes_.push_back(c); });
  ASSERT_TRUE(p);
  (*p)->start();
  sim_.advance(0ms);
  ASSERT_EQ(net_.sent().size(), 1u);
  Bytes request = net_.sent()[0].icmp;
  auto reply_of = [](Bytes m) {
    m[0] = kEchoReplyV4;
    m[2] = m[3] = 0;
    uint16_t sum = internetChecksum(m);
    m[2] = static_cast<uint8_t>(sum >> 8);
    m[3] = static_cast<uint8_t>(sum);
    return m;
  };
  Bytes other_id = request;
  other_id[4] ^= 1;                // another process's identifier
  ASSERT_EQ(request.size(), 16u);  // 8 header bytes, then the 8-byte per-run nonce
  Bytes other_nonce = request;
  other_nonce[15] ^= 1;  // same identifier, another run's payload
  (*deliver)(kGw, reply_of(other_id));
  (*deliver)(kGw, reply_of(other_nonce));
  (*deliver)(*IpAddress::parse("198.51.100.7"), reply_of(request));  // not a target
  (*deliver)(kGw, request);                                          // our own request
  EXPECT_EQ((*p)->state(), Reach::kPending);
  (*deliver)(kGw, reply_of(request));
  EXPECT_EQ((*p)->state(), Reach::kReached);
  // Ours by identifier and nonce: the stranger's copy and the real one; only the target's
  // counted for the verdict.
  EXPECT_EQ((*p)->replies(), 2u);
}

TEST_F(PingerTest, ATransportThatCannotOpenIsAnError) {
  config::Tiebreaker cfg{{kGw}, 1000ms, 1000ms};
  MakeEchoTransport refuse = [](bool, bool, OnIcmp) -> Result<std::unique_ptr<EchoTransport>> {
    return fail(ErrorCode::kPermissionDenied, "cannot open a raw ICMP socket");
  };
  auto p = Pinger::create(sim_, cfg, 1, refuse, nullptr);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "cannot open a raw ICMP socket");
}

}  // namespace
}  // namespace tandem::ping
