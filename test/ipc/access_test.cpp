// Who may ask tandemd what: the pure rule and the per-connection policy on a fake user db.
#include "ipc/access.h"

#include <gtest/gtest.h>

#include <chrono>

#include "ipc_fakes.h"

namespace tandem::ipc {
namespace {

using fakes::FakeUserDb;

class AccessPolicyTest : public ::testing::Test {
 protected:
  AccessPolicy policy(const std::string& group = "tandem-admin") {
    auto p = AccessPolicy::create(users_, group);
    EXPECT_TRUE(p.has_value()) << p.error().message;
    return std::move(*p);
  }
  static Peer peer(uid_t uid, gid_t gid) { return Peer{Credentials{uid, gid, 4242}, {}}; }

  FakeUserDb users_;
};

TEST_F(AccessPolicyTest, RootMayChangeWithoutALookup) {
  Peer root = peer(0, 0);
  EXPECT_TRUE(policy().authorize(RequestId::kStandby, root).has_value());
  EXPECT_EQ(users_.lookups, 0);
}

TEST_F(AccessPolicyTest, EveryoneMayAskForStatusWithoutALookup) {
  Peer nobody = peer(65534, 65534);
  EXPECT_TRUE(policy().authorize(RequestId::kStatus, nobody).has_value());
  EXPECT_EQ(users_.lookups, 0);
}

TEST_F(AccessPolicyTest, MemberThroughSupplementaryGroupsMayChange) {
  users_.users[1000] = UserInfo{"alice", {1000, 900}};
  Peer alice = peer(1000, 1000);
  EXPECT_TRUE(policy().authorize(RequestId::kMove, alice).has_value());
}

TEST_F(AccessPolicyTest, UserWhosePrimaryGroupIsTheAdminGroupMayChange) {
  Peer svc = peer(1001, 900);  // not in the fake db at all: only its primary gid is known
  EXPECT_TRUE(policy().authorize(RequestId::kReload, svc).has_value());
}

TEST_F(AccessPolicyTest, OtherUserIsRefusedSayingWhoAndWhichGroup) {
  users_.users[65534] = UserInfo{"nobody", {65534}};
  Peer nobody = peer(65534, 65534);
  auto r = policy().authorize(RequestId::kStandby, nobody);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(r.error().message,
            "standby: permission denied: user nobody (uid 65534) is not root and not in group "
            "tandem-admin; run tandem as root, or add the user to tandem-admin (the group is "
            "control.group in tandem.conf)");
}

TEST_F(AccessPolicyTest, VerdictIsLookedUpOncePerConnection) {
  Peer nobody = peer(65534, 65534);
  AccessPolicy p = policy();
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(p.authorize(RequestId::kClear, nobody).has_value());
  EXPECT_EQ(users_.lookups, 1);
}

TEST_F(AccessPolicyTest, FailedLookupRefusesInsteadOfGuessing) {
  users_.lookup_fails = true;
  Peer alice = peer(1000, 1000);
  auto r = policy().authorize(RequestId::kStandby, alice);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("cannot look up the groups of uid 1000: the directory is down"),
            std::string::npos);
}

TEST_F(AccessPolicyTest, MissingGroupIsAStartupError) {
  auto p = AccessPolicy::create(users_, "tandem-admins");
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().message,
            "control.group \"tandem-admins\": no such group; create the group or name an "
            "existing one");
}

TEST(MayChangeTest, RuleIsRootOrGidOrGroupList) {
  AdminGroup admins{"admins", 900};
  EXPECT_TRUE(mayChange(Credentials{0, 5, 1}, UserInfo{"root", {}}, admins).has_value());
  EXPECT_TRUE(mayChange(Credentials{7, 900, 1}, UserInfo{"a", {}}, admins).has_value());
  EXPECT_TRUE(mayChange(Credentials{7, 7, 1}, UserInfo{"a", {7, 900}}, admins).has_value());
  EXPECT_FALSE(mayChange(Credentials{7, 7, 1}, UserInfo{"a", {7, 901}}, admins).has_value());
}

TEST(CachedUserDbTest, AUserIsLookedUpOnceWithinTheTtlAndAgainAfter) {
  FakeUserDb inner;
  std::chrono::steady_clock::time_point now{};
  CachedUserDb db(
      inner, [&now] { return now; }, 4, std::chrono::seconds(60));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(db.user(1000, 1000).has_value());
  EXPECT_EQ(inner.lookups, 1);
  now += std::chrono::seconds(60);
  ASSERT_TRUE(db.user(1000, 1000).has_value());
  EXPECT_EQ(inner.lookups, 2);
}

TEST(CachedUserDbTest, ItHoldsAtMostItsCapacityAndForgetsTheOldest) {
  FakeUserDb inner;
  std::chrono::steady_clock::time_point now{};
  CachedUserDb db(
      inner, [&now] { return now; }, 4, std::chrono::seconds(60));
  for (uid_t uid = 1000; uid < 1100; ++uid) {
    now += std::chrono::milliseconds(1);
    ASSERT_TRUE(db.user(uid, uid).has_value());
  }
  EXPECT_EQ(db.size(), 4u);
  const int before = inner.lookups;
  ASSERT_TRUE(db.user(1099, 1099).has_value());  // the newest is still there
  EXPECT_EQ(inner.lookups, before);
  ASSERT_TRUE(db.user(1000, 1000).has_value());  // the oldest was forgotten
  EXPECT_EQ(inner.lookups, before + 1);
}

TEST(CachedUserDbTest, AFailedLookupIsNotRemembered) {
  FakeUserDb inner;
  inner.lookup_fails = true;
  CachedUserDb db(inner, [] { return std::chrono::steady_clock::time_point{}; });
  EXPECT_FALSE(db.user(1000, 1000).has_value());
  inner.lookup_fails = false;
  EXPECT_TRUE(db.user(1000, 1000).has_value());
  EXPECT_EQ(inner.lookups, 2);
}

TEST(AccessPolicyPrivilegeTest, PrivilegedIsRootOrTheAdminGroup) {
  FakeUserDb users;
  users.users[1001] = UserInfo{"alice", {1001, 900}};
  auto policy = AccessPolicy::create(users, "tandem-admin");
  ASSERT_TRUE(policy.has_value());
  EXPECT_TRUE(policy->privileged(0, 0));
  EXPECT_TRUE(policy->privileged(1002, 900));   // primary group
  EXPECT_TRUE(policy->privileged(1001, 1001));  // group list
  EXPECT_FALSE(policy->privileged(65534, 65534));
  users.lookup_fails = true;
  EXPECT_FALSE(policy->privileged(1001, 1001)) << "a failed lookup is no";
}

}  // namespace
}  // namespace tandem::ipc
