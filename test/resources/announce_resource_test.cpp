#include "announce/announce_resource.h"

#include <gtest/gtest.h>

#include "fake_packet_socket.h"
#include "fakes/sim_dispatcher.h"

namespace tandem::resources::announce {
namespace {

using namespace std::chrono_literals;

IpAddress ip(const char* s) { return *IpAddress::parse(s); }

const MacAddress kNeighborMac{{0x02, 0x00, 0x5e, 0x00, 0x00, 0x99}};

// An ARP reply from neighbor (kNeighborMac) to the VIP.
Frame arpReply(const IpAddress& neighbor, const IpAddress& vip, const MacAddress& to) {
  Frame f = buildGarpReply(kNeighborMac, neighbor);
  for (size_t i = 0; i < 6; ++i) f[i] = to.bytes[i];
  for (size_t i = 0; i < 6; ++i) f[32 + i] = to.bytes[i];
  for (size_t i = 0; i < 4; ++i) f[38 + i] = vip.bytes[i];
  return f;
}

class AnnounceTest : public ::testing::Test {
 protected:
  AnnounceTest() {
    vip_.address = *IpPrefix::parse("198.51.100.10/24");
    vip_.interface = "eth0";
  }

  std::unique_ptr<AnnounceResource> make() {
    return makeAnnounceResource(vip_, sim_, sockets_, [this](LogLevel s, const std::string& line) {
      log_.push_back({s, line});
    });
  }

  Result<void> run(void (Resource::*op)(Done), Resource& r) {
    Result<void> out = fail(ErrorCode::kInternal, "not answered");
    (r.*op)([&out](Result<void> x) { out = x; });
    return out;
  }

  // Milliseconds since t0_ of each frame sent on the send-only socket, one entry per frame.
  std::vector<long> announceTimes() const {
    std::vector<long> out;
    for (const auto& s : sockets_.sent) {
      if (s.socket_ethertype == 0) {
        out.push_back(std::chrono::duration_cast<Millis>(s.at - t0_).count());
      }
    }
    return out;
  }
  std::vector<const fakes::FakePacketSocketOpener::Sent*> probes() const {
    std::vector<const fakes::FakePacketSocketOpener::Sent*> out;
    for (const auto& s : sockets_.sent) {
      if (s.socket_ethertype != 0) out.push_back(&s);
    }
    return out;
  }
  size_t logCount(LogLevel s, const std::string& text) const {
    size_t n = 0;
    for (const auto& [sev, line] : log_) n += sev == s && line.find(text) != std::string::npos;
    return n;
  }

  // Both forms per announcement: twice the times.
  static std::vector<long> twice(std::vector<long> ms) {
    std::vector<long> out;
    for (long t : ms) out.insert(out.end(), {t, t});
    return out;
  }

  fakes::SimDispatcher sim_;
  loop::MonoTime t0_ = sim_.now();
  fakes::FakePacketSocketOpener sockets_{sim_};
  config::Vip vip_;
  std::vector<std::pair<LogLevel, std::string>> log_;
};

TEST_F(AnnounceTest, StartSendsTheFirstAnnouncementBeforeItReturns) {
  auto r = make();
  EXPECT_FALSE(r->present());
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_TRUE(r->present());
  ASSERT_EQ(sockets_.sent.size(), 2u);
  EXPECT_EQ(sockets_.sent[0].frame, buildGarpRequest(sockets_.mac, ip("198.51.100.10")));
  EXPECT_EQ(sockets_.sent[1].frame, buildGarpReply(sockets_.mac, ip("198.51.100.10")));
  EXPECT_EQ(sockets_.sent[0].at, t0_);
  EXPECT_EQ(sockets_.opens, std::vector<std::string>{"eth0/0"});
  EXPECT_EQ(r->mac(), sockets_.mac);
  EXPECT_EQ(r->name(), "announce 198.51.100.10");
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, DefaultScheduleIsFiveAt200msThenFiveMoreAfter5s) {
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(1h);
  EXPECT_EQ(announceTimes(), twice({0, 200, 400, 600, 800, 5000, 5200, 5400, 5600, 5800}));
  EXPECT_EQ(logCount(LogLevel::kInfo, "announced vip=198.51.100.10 dev=eth0"), 2u);
  EXPECT_EQ(logCount(LogLevel::kInfo, "burst=first announcements=5 frames=10/10"), 1u);
  EXPECT_EQ(logCount(LogLevel::kInfo, "burst=second announcements=5 frames=10/10"), 1u);
  EXPECT_EQ(sim_.armedTimers(), 0u) << "no refresh configured: nothing left to do";
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, CountAndIntervalAreConfigurable) {
  vip_.announce_count = 3;
  vip_.announce_interval = 50ms;
  vip_.announce_second_burst = 0ms;
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(1h);
  EXPECT_EQ(announceTimes(), twice({0, 50, 100}));
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, SecondBurstNeverOverlapsTheFirst) {
  vip_.announce_count = 4;
  vip_.announce_interval = 2s;  // the first burst ends at 6 s, after the 5 s second-burst delay
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(1h);
  EXPECT_EQ(announceTimes(), twice({0, 2000, 4000, 6000, 8000, 10000, 12000, 14000}));
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, RefreshAnnouncesOnceEachPeriodWhileHeld) {
  vip_.announce_count = 1;
  vip_.announce_second_burst = 0ms;
  vip_.announce_refresh = 3s;
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(10s);
  EXPECT_EQ(announceTimes(), twice({0, 3000, 6000, 9000}));
  ASSERT_TRUE(run(&Resource::stop, *r));
  sim_.advance(1h);
  EXPECT_EQ(announceTimes().size(), 8u) << "no refresh after stop";
}

TEST_F(AnnounceTest, StopCancelsTheRestOfTheSchedule) {
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(300ms);
  ASSERT_TRUE(run(&Resource::stop, *r));
  EXPECT_FALSE(r->present());
  EXPECT_EQ(sim_.armedTimers(), 0u);
  EXPECT_EQ(sockets_.openSockets(), 0);
  sim_.advance(1h);
  EXPECT_EQ(announceTimes(), twice({0, 200}));
  EXPECT_TRUE(run(&Resource::stop, *r)) << "stopping what is stopped succeeds";
}

TEST_F(AnnounceTest, StartWhileStartedAdoptsWithoutANewBurst) {
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(100ms);
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(1h);
  EXPECT_EQ(announceTimes(), twice({0, 200, 400, 600, 800, 5000, 5200, 5400, 5600, 5800}));
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, EachTakeoverReadsTheMacAgain) {
  vip_.announce_second_burst = 0ms;
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  ASSERT_TRUE(run(&Resource::stop, *r));
  sockets_.mac = MacAddress{{0x02, 0, 0, 0, 0, 0x42}};
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_EQ(r->mac(), sockets_.mac);
  EXPECT_EQ(sockets_.sent.back().frame, buildGarpReply(sockets_.mac, ip("198.51.100.10")));
  EXPECT_EQ(sockets_.opens, (std::vector<std::string>{"eth0/0", "eth0/0"}));
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, Ipv6SendsOneUnsolicitedNaPerAnnouncement) {
  vip_.address = *IpPrefix::parse("2001:db8::10/64");
  vip_.announce_second_burst = 0ms;
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(1h);
  EXPECT_EQ(announceTimes(), (std::vector<long>{0, 200, 400, 600, 800}));
  EXPECT_EQ(sockets_.sent[0].frame, buildUnsolicitedNa(sockets_.mac, ip("2001:db8::10")));
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, Ipv6NaCarriesTheRouterFlagWhenTheInterfaceForwards) {
  vip_.address = *IpPrefix::parse("2001:db8::10/64");
  std::vector<std::string> asked;
  bool forwarding = true;
  auto r = makeAnnounceResource(
      vip_, sim_, sockets_, [](LogLevel, const std::string&) {},
      [&](const std::string& interface) {
        asked.push_back(interface);
        return forwarding;
      });
  ASSERT_TRUE(run(&Resource::start, *r));
  ASSERT_FALSE(sockets_.sent.empty());
  EXPECT_EQ(sockets_.sent[0].frame,
            buildUnsolicitedNa(sockets_.mac, ip("2001:db8::10"), NaRouter::kSet));
  ASSERT_TRUE(run(&Resource::stop, *r));
  // Asked again at the next takeover: forwarding was turned off in between.
  forwarding = false;
  sockets_.sent.clear();
  ASSERT_TRUE(run(&Resource::start, *r));
  ASSERT_FALSE(sockets_.sent.empty());
  EXPECT_EQ(sockets_.sent[0].frame, buildUnsolicitedNa(sockets_.mac, ip("2001:db8::10")));
  EXPECT_EQ(asked, (std::vector<std::string>{"eth0", "eth0"}));
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, Ipv4NeverAsksWhetherTheInterfaceForwards) {
  int asked = 0;
  auto r = makeAnnounceResource(
      vip_, sim_, sockets_, [](LogLevel, const std::string&) {},
      [&](const std::string&) {
        ++asked;
        return true;
      });
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(1h);
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(sockets_.sent[0].frame, buildGarpRequest(sockets_.mac, ip("198.51.100.10")));
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, CountZeroSendsNothing) {
  vip_.announce_count = 0;
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(1h);
  EXPECT_TRUE(sockets_.sent.empty());
  EXPECT_TRUE(log_.empty());
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, ReannounceStartsTheWholeScheduleAgain) {
  auto r = make();
  r->reannounce();
  EXPECT_TRUE(sockets_.sent.empty()) << "not started: nothing to re-announce";
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(10s);
  r->reannounce();
  sim_.advance(1h);
  EXPECT_EQ(announceTimes(),
            twice({0,     200,   400,   600,   800,   5000,  5200,  5400,  5600,  5800,  //
                   10000, 10200, 10400, 10600, 10800, 15000, 15200, 15400, 15600, 15800}));
  EXPECT_EQ(logCount(LogLevel::kInfo, "announcing again after split brain vip=198.51.100.10"), 1u);
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, ReannounceDuringABurstRestartsIt) {
  vip_.announce_second_burst = 0ms;
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(300ms);
  r->reannounce();
  sim_.advance(1h);
  EXPECT_EQ(announceTimes(), twice({0, 200, 300, 500, 700, 900, 1100}));
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, SendFailuresAreLoggedButDoNotFailTheTakeover) {
  vip_.announce_second_burst = 0ms;
  sockets_.fail_sends = true;
  auto r = make();
  EXPECT_TRUE(run(&Resource::start, *r));
  sim_.advance(1h);
  EXPECT_EQ(logCount(LogLevel::kWarning, "announce incomplete vip=198.51.100.10"), 1u);
  EXPECT_EQ(logCount(LogLevel::kWarning, "frames=0/10"), 1u);
  EXPECT_EQ(logCount(LogLevel::kWarning, "No buffer space"), 1u);
  // Each failure drops the socket, so the next announcement opens it again.
  EXPECT_EQ(sockets_.opens.size(), 5u);
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(AnnounceTest, AMissingInterfaceIsLoggedByName) {
  vip_.announce_second_burst = 0ms;
  sockets_.fail_opens = true;
  auto r = make();
  EXPECT_TRUE(run(&Resource::start, *r));
  sim_.advance(1h);
  EXPECT_EQ(logCount(LogLevel::kWarning, "interface eth0 does not exist"), 1u);
  ASSERT_TRUE(run(&Resource::stop, *r));
}

// --- verification ------------------------------------------------------------------------------

class VerifyTest : public AnnounceTest {
 protected:
  VerifyTest() {
    vip_.verify_neighbors = {ip("198.51.100.1"), ip("198.51.100.2")};
    vip_.announce_second_burst = 0ms;
  }
  void reply(const Frame& f) {
    ASSERT_NE(sockets_.receiver(), nullptr);
    sockets_.receiver()->inbox.push_back(f);
    ASSERT_TRUE(sim_.fireFd(sockets_.receiver()->fd(), loop::FdEvents{true, false}));
  }
};

TEST_F(VerifyTest, ProbesEachNeighbourFromTheVipWhenTheFirstBurstEnds) {
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_EQ(r->verification().state, Verification::State::kNotRun);
  sim_.advance(799ms);
  EXPECT_TRUE(probes().empty());
  sim_.advance(1ms);
  EXPECT_EQ(r->verification().state, Verification::State::kProbing);
  EXPECT_EQ(sockets_.opens, (std::vector<std::string>{"eth0/0", "eth0/2054"}));
  ASSERT_EQ(probes().size(), 2u);
  EXPECT_EQ(probes()[0]->frame,
            buildArpProbe(sockets_.mac, ip("198.51.100.10"), ip("198.51.100.1")));
  EXPECT_EQ(probes()[1]->frame,
            buildArpProbe(sockets_.mac, ip("198.51.100.10"), ip("198.51.100.2")));
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(VerifyTest, RecordsWhoAnsweredWithWhichMacAndReportsTheRestAfterTheTimeout) {
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(800ms + 3ms);
  reply(buildArpProbe(kNeighborMac, ip("198.51.100.2"), ip("198.51.100.1")));  // noise
  reply(arpReply(ip("198.51.100.1"), ip("198.51.100.10"), sockets_.mac));
  const Verification& v = r->verification();
  EXPECT_EQ(v.state, Verification::State::kProbing);
  ASSERT_EQ(v.neighbors.size(), 2u);
  EXPECT_TRUE(v.neighbors[0].answered);
  EXPECT_EQ(v.neighbors[0].mac, kNeighborMac);
  EXPECT_EQ(v.neighbors[0].rtt, std::chrono::microseconds(3000));
  EXPECT_FALSE(v.neighbors[1].answered);

  sim_.advance(kVerifyTimeout - 3ms - 1ms);
  EXPECT_EQ(r->verification().state, Verification::State::kProbing);
  sim_.advance(1ms);
  EXPECT_EQ(r->verification().state, Verification::State::kDone);
  EXPECT_FALSE(r->verification().neighbors[1].answered);
  EXPECT_FALSE(r->verification().neighbors[1].mac);
  // The unanswered neighbour was asked again every kProbeRetry; the answered one was not.
  std::vector<long> again;
  for (auto* p : probes()) {
    if (p->frame == buildArpProbe(sockets_.mac, ip("198.51.100.10"), ip("198.51.100.2"))) {
      again.push_back(std::chrono::duration_cast<Millis>(p->at - t0_).count());
    }
  }
  EXPECT_EQ(again, (std::vector<long>{800, 1050, 1300, 1550}));
  EXPECT_EQ(probes().size(), 5u);
  EXPECT_EQ(sockets_.receiver(), nullptr) << "the probe socket is closed";
  EXPECT_EQ(logCount(LogLevel::kWarning,
                     "neighbours unverified vip=198.51.100.10 dev=eth0 "
                     "198.51.100.1=02:00:5e:00:00:99(3.00ms) 198.51.100.2=no-answer"),
            1u);
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(VerifyTest, EndsAsSoonAsEveryNeighbourAnswered) {
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(801ms);
  reply(arpReply(ip("198.51.100.2"), ip("198.51.100.10"), sockets_.mac));
  reply(arpReply(ip("198.51.100.1"), ip("198.51.100.10"), sockets_.mac));
  EXPECT_EQ(r->verification().state, Verification::State::kDone);
  EXPECT_EQ(sockets_.receiver(), nullptr);
  EXPECT_EQ(sim_.armedTimers(), 0u);
  EXPECT_EQ(logCount(LogLevel::kInfo, "neighbours answered vip=198.51.100.10"), 1u);
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(VerifyTest, StopForgetsTheVerification) {
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  sim_.advance(900ms);
  ASSERT_TRUE(run(&Resource::stop, *r));
  EXPECT_EQ(r->verification().state, Verification::State::kNotRun);
  EXPECT_EQ(sockets_.openSockets(), 0);
  EXPECT_EQ(sim_.armedTimers(), 0u);
}

TEST_F(VerifyTest, ASocketThatCannotOpenEndsTheVerificationWithTheReason) {
  vip_.announce_count = 0;  // verification at once
  sockets_.fail_opens = true;
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_EQ(r->verification().state, Verification::State::kDone);
  EXPECT_EQ(r->verification().error, "interface eth0 does not exist");
  EXPECT_EQ(logCount(LogLevel::kWarning, "error=\"interface eth0 does not exist\""), 1u);
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST_F(VerifyTest, Ipv6NeighboursAreSolicited) {
  vip_.address = *IpPrefix::parse("2001:db8::10/64");
  vip_.verify_neighbors = {ip("2001:db8::1")};
  vip_.announce_count = 1;
  auto r = make();
  ASSERT_TRUE(run(&Resource::start, *r));
  EXPECT_EQ(sockets_.opens, (std::vector<std::string>{"eth0/0", "eth0/34525"}));
  ASSERT_EQ(probes().size(), 1u);
  EXPECT_EQ(probes()[0]->frame,
            buildNeighborSolicitation(sockets_.mac, ip("2001:db8::10"), ip("2001:db8::1")));
  ASSERT_TRUE(run(&Resource::stop, *r));
}

TEST(NeighborReport, JsonForStatus) {
  Verification v;
  v.state = Verification::State::kDone;
  v.neighbors.push_back(NeighborResult{ip("198.51.100.1"), true, kNeighborMac, 412us});
  v.neighbors.push_back(NeighborResult{ip("198.51.100.2"), false, std::nullopt, std::nullopt});
  EXPECT_EQ(toJson(v).dump(),
            R"({"neighbors":[{"address":"198.51.100.1","answered":true,"mac":"02:00:5e:00:00:99",)"
            R"("rtt_us":412},{"address":"198.51.100.2","answered":false}],"state":"done"})");
  v.error = "interface eth0 does not exist";
  EXPECT_EQ(toJson(v)["error"], "interface eth0 does not exist");
  EXPECT_EQ(toJson(Verification{}).dump(), R"({"neighbors":[],"state":"not-run"})");
}

}  // namespace
}  // namespace tandem::resources::announce
