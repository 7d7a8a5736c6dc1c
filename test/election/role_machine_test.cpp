#include "election/role_machine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace tandem::election {
namespace {

using A = RoleAction;
using E = RoleEvent;
using R = Role;

// The expected machine, written out independently of role_machine.cpp: every (role, event) pair
// not listed must be ignored. A change to the table must change this list too.
const std::map<std::pair<R, E>, Transition>& expected() {
  static const std::map<std::pair<R, E>, Transition> m = {
      {{R::kInit, E::kInitDone}, {R::kBackup, {A::kAnnounce}}},
      {{R::kInit, E::kResumeActive}, {R::kTakingOver, {A::kStartResources, A::kAnnounce}}},
      {{R::kInit, E::kResumeHeld}, {R::kActive, {A::kAnnounce}}},
      {{R::kInit, E::kReleaseOrphans}, {R::kReleasing, {A::kStopResources, A::kAnnounce}}},
      {{R::kBackup, E::kElected}, {R::kTakingOver, {A::kStartResources, A::kAnnounce}}},
      {{R::kBackup, E::kElectedNeedsFence}, {R::kFencing, {A::kRunFence, A::kAnnounce}}},
      {{R::kBackup, E::kStandbyOn}, {R::kStandby, {A::kAnnounce}}},
      {{R::kBackup, E::kHealthLost}, {R::kFault, {A::kAnnounce}}},
      {{R::kFencing, E::kFenceDone}, {R::kTakingOver, {A::kStartResources, A::kAnnounce}}},
      {{R::kFencing, E::kFenceFailed}, {R::kBackup, {A::kAlarm, A::kAnnounce}}},
      {{R::kFencing, E::kNotElected}, {R::kBackup, {A::kCancelFence, A::kAnnounce}}},
      {{R::kFencing, E::kStandbyOn}, {R::kStandby, {A::kCancelFence, A::kAnnounce}}},
      {{R::kFencing, E::kHealthLost}, {R::kFault, {A::kCancelFence, A::kAnnounce}}},
      {{R::kTakingOver, E::kResourcesStarted}, {R::kActive, {A::kAnnounce}}},
      {{R::kTakingOver, E::kResourceFailed},
       {R::kReleasing, {A::kAlarm, A::kStopResources, A::kAnnounce}}},
      {{R::kTakingOver, E::kNotElected}, {R::kReleasing, {A::kStopResources, A::kAnnounce}}},
      {{R::kTakingOver, E::kStandbyOn}, {R::kReleasing, {A::kStopResources, A::kAnnounce}}},
      {{R::kTakingOver, E::kHealthLost}, {R::kReleasing, {A::kStopResources, A::kAnnounce}}},
      {{R::kActive, E::kNotElected}, {R::kReleasing, {A::kStopResources, A::kAnnounce}}},
      {{R::kActive, E::kStandbyOn}, {R::kReleasing, {A::kStopResources, A::kAnnounce}}},
      {{R::kActive, E::kHealthLost}, {R::kReleasing, {A::kStopResources, A::kAnnounce}}},
      {{R::kActive, E::kResourceFailed},
       {R::kReleasing, {A::kAlarm, A::kStopResources, A::kAnnounce}}},
      {{R::kReleasing, E::kResourcesStopped}, {R::kBackup, {A::kSendRelease, A::kAnnounce}}},
      {{R::kReleasing, E::kResourceFailed}, {R::kFault, {A::kAlarm, A::kAnnounce}}},
      {{R::kStandby, E::kStandbyOff}, {R::kBackup, {A::kAnnounce}}},
      {{R::kFault, E::kHealthBack}, {R::kBackup, {A::kAnnounce}}},
      {{R::kFault, E::kStandbyOn}, {R::kStandby, {A::kAnnounce}}},
  };
  return m;
}

class EveryPair : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(EveryPair, DoesWhatTheTableSays) {
  auto role = static_cast<R>(std::get<0>(GetParam()));
  auto event = static_cast<E>(std::get<1>(GetParam()));
  std::optional<Transition> got = step(role, event);
  auto it = expected().find({role, event});
  if (it == expected().end()) {
    EXPECT_FALSE(got) << roleName(role) << " + " << roleEventName(event)
                      << " must be ignored, but goes to " << roleName(got->next);
    return;
  }
  ASSERT_TRUE(got) << roleName(role) << " + " << roleEventName(event) << " is ignored";
  EXPECT_EQ(got->next, it->second.next) << roleName(role) << " + " << roleEventName(event);
  EXPECT_EQ(got->actions, it->second.actions) << roleName(role) << " + " << roleEventName(event);
}

INSTANTIATE_TEST_SUITE_P(RoleMachine, EveryPair,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(kRoleCount)),
                                            ::testing::Range(0, static_cast<int>(kRoleEventCount))),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>>& p) {
                           std::string n =
                               std::string(roleName(static_cast<R>(std::get<0>(p.param)))) + "_" +
                               std::string(roleEventName(static_cast<E>(std::get<1>(p.param))));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(RoleMachine, ResourcesAreStoppedOnEveryWayOutOfHoldingThem) {
  // Any transition from a holding role to a non-holding one must stop resources first, or
  // be the stop's own completion (RELEASING -> BACKUP/FAULT).
  for (size_t r = 0; r < kRoleCount; ++r) {
    for (size_t e = 0; e < kRoleEventCount; ++e) {
      auto role = static_cast<R>(r);
      auto t = step(role, static_cast<E>(e));
      if (!t || role == R::kReleasing) continue;
      if (holdsResources(role) && !holdsResources(t->next)) {
        ADD_FAILURE() << roleName(role) << " leaves holding without the release path";
      }
      if (!holdsResources(role) && t->next == R::kReleasing) {
        EXPECT_EQ(role, R::kInit) << "only a startup with orphans releases from rest";
      }
    }
  }
}

TEST(RoleMachine, EveryRoleIsReachableFromInit) {
  std::set<R> seen{R::kInit};
  std::vector<R> todo{R::kInit};
  while (!todo.empty()) {
    R r = todo.back();
    todo.pop_back();
    for (size_t e = 0; e < kRoleEventCount; ++e) {
      if (auto t = step(r, static_cast<E>(e)); t && seen.insert(t->next).second) {
        todo.push_back(t->next);
      }
    }
  }
  EXPECT_EQ(seen.size(), kRoleCount);
}

}  // namespace
}  // namespace tandem::election
