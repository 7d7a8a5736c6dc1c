// What the [notify] hooks run for each event, and with what environment (pure), held to the
// environment table of conf/reference.md.
#include "notify/notify_events.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace tandem::resources::notify {
namespace {

using election::Role;
using election::RoleEvent;

config::Command argv(const std::string& program) { return config::Command{{program}, false}; }

config::Notify everyHook() {
  config::Notify n;
  n.role = argv("/usr/local/sbin/on-role");
  n.active = argv("/usr/local/sbin/on-active");
  n.backup = argv("/usr/local/sbin/on-backup");
  n.fault = config::Command{{"/usr/local/sbin/page fault"}, true};
  n.vip = argv("/usr/local/sbin/on-vip");
  n.timeout = Millis(2500);
  return n;
}

Context context() {
  Context c;
  c.node = "lb1";
  c.cluster = "web";
  c.priority = 150;
  c.role = Role::kTakingOver;
  c.epoch = 7;
  c.sequence = 3;
  return c;
}

config::Vip vip(const std::string& prefix, const std::string& label = "") {
  config::Vip v;
  v.address = *IpPrefix::parse(prefix);
  v.interface = "eth0";
  v.label = label;
  return v;
}

election::RoleChange change(Role from, Role to, RoleEvent ev) {
  return election::RoleChange{from, to, ev, "best ranked eligible node", 7};
}

std::vector<std::string> programs(const std::vector<EventCommand>& cmds) {
  std::vector<std::string> out;
  for (const auto& c : cmds) out.push_back(c.command.argv.at(0));
  return out;
}

TEST(NotifyEvents, BecomingActiveRunsActiveThenRoleWithTheDocumentedEnvironment) {
  auto cmds = forRoleChange(everyHook(), context(),
                            change(Role::kTakingOver, Role::kActive, RoleEvent::kResourcesStarted));
  ASSERT_EQ(programs(cmds),
            (std::vector<std::string>{"/usr/local/sbin/on-active", "/usr/local/sbin/on-role"}));
  EXPECT_EQ(cmds[0].timeout, Millis(2500));
  EXPECT_EQ(cmds[0].env, (std::vector<std::string>{
                             "TANDEM_EVENT=role",
                             "TANDEM_HOOK=active",
                             "TANDEM_NODE=lb1",
                             "TANDEM_CLUSTER=web",
                             "TANDEM_PRIORITY=150",
                             "TANDEM_EPOCH=7",
                             "TANDEM_SEQUENCE=3",
                             "TANDEM_ROLE=ACTIVE",
                             "TANDEM_PREVIOUS_ROLE=TAKING_OVER",
                             "TANDEM_ROLE_EVENT=resources-started",
                             "TANDEM_REASON=best ranked eligible node",
                         }));
  EXPECT_EQ(cmds[0].what, "event=role role=ACTIVE previous=TAKING_OVER hook=notify.active");
  EXPECT_EQ(cmds[1].env[1], "TANDEM_HOOK=role");
  EXPECT_EQ(cmds[1].what, "event=role role=ACTIVE previous=TAKING_OVER hook=notify.role");
}

// Every role: which keys run for it, the role's own first (the table is the documentation's).
TEST(NotifyEvents, EachRoleRunsItsOwnKeyIfItHasOneThenRole) {
  const std::map<Role, std::vector<std::string>> expected = {
      {Role::kInit, {"/usr/local/sbin/on-role"}},
      {Role::kBackup, {"/usr/local/sbin/on-backup", "/usr/local/sbin/on-role"}},
      {Role::kFencing, {"/usr/local/sbin/on-role"}},
      {Role::kTakingOver, {"/usr/local/sbin/on-role"}},
      {Role::kActive, {"/usr/local/sbin/on-active", "/usr/local/sbin/on-role"}},
      {Role::kReleasing, {"/usr/local/sbin/on-role"}},
      {Role::kStandby, {"/usr/local/sbin/on-role"}},
      {Role::kFault, {"/usr/local/sbin/page fault", "/usr/local/sbin/on-role"}},
  };
  ASSERT_EQ(expected.size(), election::kRoleCount);
  for (const auto& [role, want] : expected) {
    auto cmds =
        forRoleChange(everyHook(), context(), change(Role::kBackup, role, RoleEvent::kElected));
    EXPECT_EQ(programs(cmds), want) << election::roleName(role);
  }
  auto fault = forRoleChange(everyHook(), context(),
                             change(Role::kBackup, Role::kFault, RoleEvent::kHealthLost));
  EXPECT_TRUE(fault[0].command.via_shell) << "a shell line stays one";
}

TEST(NotifyEvents, OnlyTheRolesOwnKeyRunsWithoutRoleAndNothingWithoutEither) {
  config::Notify only_active;
  only_active.active = argv("/usr/local/sbin/on-active");
  EXPECT_EQ(programs(forRoleChange(
                only_active, context(),
                change(Role::kTakingOver, Role::kActive, RoleEvent::kResourcesStarted))),
            (std::vector<std::string>{"/usr/local/sbin/on-active"}));
  EXPECT_TRUE(forRoleChange(only_active, context(),
                            change(Role::kActive, Role::kReleasing, RoleEvent::kNotElected))
                  .empty());
  EXPECT_TRUE(
      forVipChange(only_active, context(), VipChange{vip("198.51.100.10/24"), true}).empty());
  EXPECT_TRUE(forRoleChange(config::Notify{}, context(),
                            change(Role::kBackup, Role::kTakingOver, RoleEvent::kElected))
                  .empty());
}

TEST(NotifyEvents, AVipChangeRunsVipWithTheAddressItsInterfaceAndTheRoleNow) {
  auto added =
      forVipChange(everyHook(), context(), VipChange{vip("198.51.100.10/24", "eth0:web"), true});
  ASSERT_EQ(programs(added), (std::vector<std::string>{"/usr/local/sbin/on-vip"}));
  EXPECT_EQ(added[0].env, (std::vector<std::string>{
                              "TANDEM_EVENT=vip",
                              "TANDEM_HOOK=vip",
                              "TANDEM_NODE=lb1",
                              "TANDEM_CLUSTER=web",
                              "TANDEM_PRIORITY=150",
                              "TANDEM_EPOCH=7",
                              "TANDEM_SEQUENCE=3",
                              "TANDEM_ROLE=TAKING_OVER",
                              "TANDEM_VIP=198.51.100.10",
                              "TANDEM_VIP_PREFIX=198.51.100.10/24",
                              "TANDEM_INTERFACE=eth0",
                              "TANDEM_VIP_LABEL=eth0:web",
                              "TANDEM_VIP_STATE=added",
                          }));
  EXPECT_EQ(added[0].what,
            "event=vip vip=198.51.100.10/24 interface=eth0 state=added hook=notify.vip");
  auto removed = forVipChange(everyHook(), context(), VipChange{vip("2001:db8::10/64"), false});
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].env[8], "TANDEM_VIP=2001:db8::10");
  EXPECT_EQ(removed[0].env[12], "TANDEM_VIP_STATE=removed");
}

// The names of "KEY=value" lines.
std::set<std::string> names(const std::vector<EventCommand>& cmds) {
  std::set<std::string> out;
  for (const auto& c : cmds) {
    for (const auto& kv : c.env) out.insert(kv.substr(0, kv.find('=')));
  }
  return out;
}

// conf/reference.md's [notify] environment table names exactly the variables the hooks get.
TEST(NotifyEvents, TheReferenceDocumentsExactlyTheEnvironment) {
  std::ifstream in(REFERENCE_MD);
  ASSERT_TRUE(in) << REFERENCE_MD;
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const size_t from = all.find("### `[notify]`");
  ASSERT_NE(from, std::string::npos);
  const size_t to = all.find("\n## ", from);
  const std::string section = all.substr(from, to - from);
  std::set<std::string> documented;
  const std::regex row(R"(\n\| `(TANDEM_[A-Z_]+)` \|)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), row);
       it != std::sregex_iterator(); ++it) {
    documented.insert((*it)[1]);
  }
  std::set<std::string> given =
      names(forRoleChange(everyHook(), context(),
                          change(Role::kTakingOver, Role::kActive, RoleEvent::kResourcesStarted)));
  for (const auto& n :
       names(forVipChange(everyHook(), context(), VipChange{vip("198.51.100.10/24"), true}))) {
    given.insert(n);
  }
  EXPECT_EQ(documented, given);
  // Every role event the hooks can be told is listed under TANDEM_ROLE_EVENT.
  for (size_t e = 0; e < election::kRoleEventCount; ++e) {
    const std::string name(election::roleEventName(static_cast<RoleEvent>(e)));
    EXPECT_NE(section.find("`" + name + "`"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace tandem::resources::notify
