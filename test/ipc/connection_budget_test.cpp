// Who may hold how many admin connections: one user cannot take them all, root always gets in.
#include "ipc/connection_budget.h"

#include <gtest/gtest.h>

namespace tandem::ipc {
namespace {

constexpr ConnectionLimits kSmall{10, 2, 3};

TEST(ConnectionBudgetTest, OneUserHoldsAtMostItsShare) {
  ConnectionBudget b(kSmall);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(b.admit(1000, false), std::nullopt);
  auto refused = b.admit(1000, false);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(*refused, "uid 1000 already holds 3 admin connections, the most one user may");
  EXPECT_EQ(b.admit(1001, false), std::nullopt) << "another user is not held back";
  b.release(1000);
  EXPECT_EQ(b.admit(1000, false), std::nullopt) << "a closed connection frees its place";
  EXPECT_EQ(b.openBy(1000), 3u);
}

TEST(ConnectionBudgetTest, TheLastPlacesAreKeptForRootAndTheAdminGroup) {
  ConnectionBudget b(kSmall);
  for (uid_t u = 1000; u < 1008; ++u) ASSERT_EQ(b.admit(u, false), std::nullopt);
  auto refused = b.admit(2000, false);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(*refused, "the last 2 admin connections are kept for root and the admin group");
  EXPECT_EQ(b.admit(1500, true), std::nullopt) << "an admin gets a kept place";
  EXPECT_EQ(b.admit(0, true), std::nullopt) << "root gets the last";
  refused = b.admit(0, true);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(*refused, "all 10 admin connections are open");
  EXPECT_EQ(b.open(), 10u);
}

TEST(ConnectionBudgetTest, RootHasNoShareOfItsOwn) {
  ConnectionBudget b(kSmall);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(b.admit(0, true), std::nullopt);
  EXPECT_EQ(b.openBy(0), 10u);
}

TEST(ConnectionBudgetTest, AReleaseOfWhatWasNeverAdmittedChangesNothing) {
  ConnectionBudget b(kSmall);
  b.release(1000);
  ASSERT_EQ(b.admit(1000, false), std::nullopt);
  b.release(1001);
  EXPECT_EQ(b.open(), 1u);
}

}  // namespace
}  // namespace tandem::ipc
