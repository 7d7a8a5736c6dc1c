#include "route/route_policy.h"

#include <gtest/gtest.h>

namespace tandem::resources::route {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const ServiceHealth kUp{2, 2, 1};
const ServiceHealth kDown{0, 2, 1};

class RoutePolicyTest : public ::testing::Test {
 protected:
  Time t0{};
  RouteDecision at(RoutePolicy& p, Millis after, Entitlement e, const ServiceHealth& h) {
    return p.decide(t0 + after, e, h);
  }
};

TEST_F(RoutePolicyTest, AHealthyEntitledServiceIsHeldAtOnceWithoutAHoldDownAtStart) {
  RoutePolicy p(seconds(30));
  RouteDecision d = at(p, Millis(0), Entitlement::kEntitled, kUp);
  EXPECT_TRUE(d.hold);
  EXPECT_EQ(d.reason, "healthy: 2 of 2 real servers up");
  EXPECT_FALSE(d.recheck);
}

TEST_F(RoutePolicyTest, FewerThanMinHealthyIsWithdrawnAndSaysHowMany) {
  RoutePolicy p(Millis(0));
  RouteDecision d = at(p, Millis(0), Entitlement::kEntitled, ServiceHealth{1, 3, 2});
  EXPECT_FALSE(d.hold);
  EXPECT_EQ(d.reason, "unhealthy: 1 of 3 real servers up, min_healthy 2");
  EXPECT_TRUE(at(p, Millis(10), Entitlement::kEntitled, ServiceHealth{2, 3, 2}).hold);
}

TEST_F(RoutePolicyTest, NoRealServerUpIsNeverHealthy) {
  RoutePolicy p(Millis(0));
  EXPECT_FALSE(at(p, Millis(0), Entitlement::kEntitled, ServiceHealth{0, 0, 0}).hold);
}

TEST_F(RoutePolicyTest, EachEntitlementWithholdsAHealthyRouteAndNamesItself) {
  for (Entitlement e : {Entitlement::kNotActive, Entitlement::kStandby, Entitlement::kFault,
                        Entitlement::kStopping}) {
    RoutePolicy p(seconds(30));
    RouteDecision d = at(p, Millis(0), e, kUp);
    EXPECT_FALSE(d.hold) << entitlementName(e);
    EXPECT_EQ(d.reason, std::string("healthy (2 of 2 real servers up), but ") + entitlementName(e));
  }
}

TEST_F(RoutePolicyTest, ARoleChangeIsNoFlapTheRouteComesBackAtOnce) {
  RoutePolicy p(seconds(30));
  EXPECT_TRUE(at(p, Millis(0), Entitlement::kEntitled, kUp).hold);
  EXPECT_FALSE(at(p, seconds(1), Entitlement::kNotActive, kUp).hold);
  EXPECT_TRUE(at(p, seconds(2), Entitlement::kEntitled, kUp).hold);
  EXPECT_EQ(p.withdrawals(), 0U);
}

TEST_F(RoutePolicyTest, WithoutAHoldDownEveryFlapIsAWithdrawal) {
  RoutePolicy p(Millis(0));
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(at(p, seconds(2 * i), Entitlement::kEntitled, kUp).hold);
    EXPECT_FALSE(at(p, seconds(2 * i + 1), Entitlement::kEntitled, kDown).hold);
  }
  EXPECT_EQ(p.withdrawals(), 5U);
  EXPECT_EQ(p.absorbedFlaps(), 0U);
}

TEST_F(RoutePolicyTest, AServiceFlappingFasterThanTheHoldDownIsWithdrawnOnce) {
  RoutePolicy p(seconds(10));
  EXPECT_TRUE(at(p, Millis(0), Entitlement::kEntitled, kUp).hold);
  // Flaps every 2 s, for a minute: down 1 s, up 1 s.
  int held = 0;
  for (int s = 1; s < 60; ++s) {
    RouteDecision d = at(p, seconds(s), Entitlement::kEntitled, s % 2 == 1 ? kDown : kUp);
    held += d.hold ? 1 : 0;
  }
  EXPECT_EQ(held, 0);
  EXPECT_EQ(p.withdrawals(), 1U);
  EXPECT_EQ(p.absorbedFlaps(), 29U);
}

TEST_F(RoutePolicyTest, AfterTheLastFlapItComesBackOnceHealthyForTheWholeHoldDown) {
  RoutePolicy p(seconds(10));
  at(p, Millis(0), Entitlement::kEntitled, kUp);
  at(p, seconds(1), Entitlement::kEntitled, kDown);
  RouteDecision d = at(p, seconds(2), Entitlement::kEntitled, kUp);
  EXPECT_FALSE(d.hold);
  ASSERT_TRUE(d.recheck);
  EXPECT_EQ(*d.recheck, t0 + seconds(12));
  EXPECT_EQ(d.reason, "hold-down: healthy for 0s of 10s since its last failure");
  d = at(p, seconds(7), Entitlement::kEntitled, kUp);
  EXPECT_FALSE(d.hold);
  EXPECT_EQ(d.reason, "hold-down: healthy for 5s of 10s since its last failure");
  // A flap inside the hold-down starts it again.
  at(p, seconds(8), Entitlement::kEntitled, kDown);
  d = at(p, seconds(9), Entitlement::kEntitled, kUp);
  EXPECT_EQ(*d.recheck, t0 + seconds(19));
  EXPECT_NE(d.reason.find("(1 flaps absorbed so far)"), std::string::npos) << d.reason;
  EXPECT_FALSE(at(p, seconds(19) - Millis(1), Entitlement::kEntitled, kUp).hold);
  d = at(p, seconds(19), Entitlement::kEntitled, kUp);
  EXPECT_TRUE(d.hold);
  EXPECT_FALSE(d.recheck);
  EXPECT_EQ(p.withdrawals(), 1U);
}

TEST_F(RoutePolicyTest, AFailureOnABackupIsDampedTooSoATakeoverDoesNotInjectAFlappingService) {
  RoutePolicy p(seconds(10));
  at(p, Millis(0), Entitlement::kNotActive, kUp);
  at(p, seconds(1), Entitlement::kNotActive, kDown);
  RouteDecision d = at(p, seconds(2), Entitlement::kEntitled, kUp);
  EXPECT_FALSE(d.hold);
  EXPECT_EQ(p.withdrawals(), 0U);  // nothing was held: no router saw anything
  EXPECT_TRUE(at(p, seconds(12), Entitlement::kEntitled, kUp).hold);
}

TEST_F(RoutePolicyTest, ASecondDecisionWithNothingChangedDecidesTheSame) {
  RoutePolicy p(seconds(10));
  at(p, Millis(0), Entitlement::kEntitled, kUp);
  RouteDecision a = at(p, seconds(1), Entitlement::kEntitled, kDown);
  RouteDecision b = at(p, seconds(1), Entitlement::kEntitled, kDown);
  EXPECT_EQ(a.hold, b.hold);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(p.withdrawals(), 1U);
  EXPECT_EQ(p.absorbedFlaps(), 0U);
}

TEST_F(RoutePolicyTest, UnhealthyAndNotEntitledNamesBoth) {
  RoutePolicy p(Millis(0));
  RouteDecision d = at(p, Millis(0), Entitlement::kStandby, kDown);
  EXPECT_EQ(d.reason, "unhealthy: 0 of 2 real servers up, min_healthy 1; and standby");
}

}  // namespace
}  // namespace tandem::resources::route
