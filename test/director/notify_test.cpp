// The [notify] hooks on whole directors (fake platforms, simulated time): they run one at a
// time in the order of the events across takeovers and handovers, a hook that hangs is killed
// at its timeout and the next one runs, a failing hook is logged and changes nothing, the queue
// stays bounded, and no hook ever delays a takeover.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "director/cluster_fixture.h"

namespace tandem::director {
namespace {

constexpr char kOnRole[] = "/usr/local/sbin/on-role";
constexpr char kOnActive[] = "/usr/local/sbin/on-active";
constexpr char kOnVip[] = "/usr/local/sbin/on-vip";

class NotifyHooks : public Cluster {
 protected:
  // Two VIPs, and hooks for every role change, for ACTIVE and for each VIP.
  void SetUp() override {
    conf_.vips = {"198.51.100.50/32", "198.51.100.51/32"};
    conf_.notify = "role = [\"" + std::string(kOnRole) + "\"]\nactive = [\"" + kOnActive +
                   "\"]\nvip = [\"" + kOnVip + "\"]\ntimeout = \"2s\"\n";
  }
  // Builds the pair with the hook programs installed and each running for `runs_for`.
  void buildWithHooks(Millis runs_for) {
    build(kPair);
    for (auto& [name, p] : platforms_) {
      for (const char* program : {kOnRole, kOnActive, kOnVip}) {
        p->fileSystem().write(program, "#!/bin/sh\n", 0755);
        p->childProcesses().programs[program] = {runs_for, 0, false};
      }
    }
  }
  fakes::SimChildren& children(const std::string& node) {
    return platforms_[node]->childProcesses();
  }
  // The hooks `node` started from the `from`th on: "role ACTIVE (active)", "vip
  // 198.51.100.50/32 added".
  std::vector<std::string> hooks(const std::string& node, size_t from = 0) {
    std::vector<std::string> out;
    const auto& starts = children(node).starts;
    for (size_t i = from; i < starts.size(); ++i) {
      auto env = [&](const char* k) { return fakes::SimChildren::env(starts[i], k); };
      if (env("TANDEM_EVENT") == "role") {
        out.push_back("role " + env("TANDEM_ROLE") + " (" + env("TANDEM_HOOK") + ")");
      } else {
        out.push_back("vip " + env("TANDEM_VIP_PREFIX") + " " + env("TANDEM_VIP_STATE"));
      }
    }
    return out;
  }
  // Each hook of `node` started once the one before it had ended.
  void expectOneAtATime(const std::string& node) {
    const auto& c = children(node);
    EXPECT_EQ(c.most_running, 1u) << node;
    for (size_t i = 1; i < c.starts.size() && i <= c.ends.size(); ++i) {
      EXPECT_GE(c.starts[i].at, c.ends[i - 1].at) << node << ": hook " << i;
    }
  }
};

TEST_F(NotifyHooks, HooksRunOneAtATimeInTheOrderOfATakeoverAndAHandover) {
  buildWithHooks(300ms);  // longer than the takeover: events queue behind a running hook
  startAll();
  ASSERT_TRUE(untilActiveHoldingVips("a"));
  run(5s);
  EXPECT_EQ(hooks("a"), (std::vector<std::string>{
                            "role BACKUP (role)",
                            "role TAKING_OVER (role)",
                            "vip 198.51.100.50/32 added",
                            "vip 198.51.100.51/32 added",
                            "role ACTIVE (active)",
                            "role ACTIVE (role)",
                        }));
  EXPECT_EQ(hooks("b"), (std::vector<std::string>{"role BACKUP (role)"}));

  const size_t a_mark = children("a").starts.size();
  const size_t b_mark = children("b").starts.size();
  ASSERT_TRUE(directors_["a"]->move({"b", std::nullopt}));
  auto took = untilActiveHoldingVips("b");
  ASSERT_TRUE(took);
  EXPECT_LT(*took, 200ms) << "a handover does not wait for its hooks";
  run(5s);
  // Released in reverse: the VIPs go last-in first-out.
  EXPECT_EQ(hooks("a", a_mark), (std::vector<std::string>{
                                    "role RELEASING (role)",
                                    "vip 198.51.100.51/32 removed",
                                    "vip 198.51.100.50/32 removed",
                                    "role BACKUP (role)",
                                }));
  EXPECT_EQ(hooks("b", b_mark), (std::vector<std::string>{
                                    "role TAKING_OVER (role)",
                                    "vip 198.51.100.50/32 added",
                                    "vip 198.51.100.51/32 added",
                                    "role ACTIVE (active)",
                                    "role ACTIVE (role)",
                                }));
  expectOneAtATime("a");
  expectOneAtATime("b");
  EXPECT_EQ(children("a").running + children("b").running, 0u);
}

TEST_F(NotifyHooks, EachHookIsToldTheChangeItsCauseAndTheEpoch) {
  buildWithHooks(10ms);
  startAll();
  ASSERT_TRUE(untilActiveHoldingVips("a"));
  run(1s);
  const size_t mark = children("b").starts.size();
  kill("a");
  ASSERT_TRUE(untilActiveHoldingVips("b"));
  run(1s);
  const auto& starts = children("b").starts;
  ASSERT_EQ(hooks("b", mark).size(), 5u);
  auto env = [&](size_t i, const char* k) { return fakes::SimChildren::env(starts[mark + i], k); };
  EXPECT_EQ(env(0, "TANDEM_ROLE"), "TAKING_OVER");
  EXPECT_EQ(env(0, "TANDEM_PREVIOUS_ROLE"), "BACKUP");
  EXPECT_EQ(env(0, "TANDEM_ROLE_EVENT"), "elected");
  EXPECT_FALSE(env(0, "TANDEM_REASON").empty());
  EXPECT_EQ(env(0, "TANDEM_NODE"), "b");
  EXPECT_EQ(env(0, "TANDEM_CLUSTER"), "t");
  EXPECT_EQ(env(0, "TANDEM_PRIORITY"), "100");
  EXPECT_EQ(env(1, "TANDEM_ROLE"), "TAKING_OVER") << "a VIP event carries the role it came in";
  EXPECT_EQ(env(1, "TANDEM_INTERFACE"), "eth0");
  EXPECT_EQ(env(1, "TANDEM_VIP"), "198.51.100.50");
  EXPECT_EQ(env(3, "TANDEM_PREVIOUS_ROLE"), "TAKING_OVER");
  EXPECT_EQ(env(3, "TANDEM_ROLE_EVENT"), "resources-started");
  EXPECT_EQ(env(3, "TANDEM_REASON"), env(0, "TANDEM_REASON")) << "the takeover's reason";
  // One epoch for the takeover, one number per event (the two hooks of ACTIVE share one).
  for (size_t i = 1; i < 5; ++i) EXPECT_EQ(env(i, "TANDEM_EPOCH"), env(0, "TANDEM_EPOCH"));
  const int first = std::stoi(env(0, "TANDEM_SEQUENCE"));
  EXPECT_EQ(env(1, "TANDEM_SEQUENCE"), std::to_string(first + 1));
  EXPECT_EQ(env(3, "TANDEM_SEQUENCE"), std::to_string(first + 3));
  EXPECT_EQ(env(4, "TANDEM_SEQUENCE"), std::to_string(first + 3));
}

TEST_F(NotifyHooks, AHookThatHangsIsKilledAtItsTimeoutTheNextRunsAndTheTakeoverDoesNotWait) {
  buildWithHooks(10ms);
  children("b").programs[kOnRole] = {1h, 0, false};  // b's role hook never ends by itself
  startAll();
  ASSERT_TRUE(untilActiveHoldingVips("a"));
  run(5s);
  const size_t mark = children("b").starts.size();
  kill("a");
  auto took = untilActiveHoldingVips("b");
  ASSERT_TRUE(took);
  EXPECT_GE(*took, 800ms);
  EXPECT_LE(*took, 1300ms) << "dead_time is 1 s, as without hooks";
  run(10s);
  const auto& c = children("b");
  EXPECT_EQ(hooks("b", mark), (std::vector<std::string>{
                                  "role TAKING_OVER (role)",
                                  "vip 198.51.100.50/32 added",
                                  "vip 198.51.100.51/32 added",
                                  "role ACTIVE (active)",
                                  "role ACTIVE (role)",
                              }));
  // The hung TAKING_OVER hook was killed 2 s after it started, and only then came the next.
  ASSERT_GE(c.ends.size(), mark + 1);
  EXPECT_TRUE(c.ends[mark].result.timed_out);
  EXPECT_EQ(c.ends[mark].at - c.starts[mark].at, 2s);
  EXPECT_EQ(c.starts[mark + 1].at, c.ends[mark].at);
  EXPECT_EQ(platforms_["b"]->log().count(
                LogLevel::kWarning,
                "notify command failed event=role role=TAKING_OVER previous=BACKUP "
                "hook=notify.role result=\"timed out\" timeout=2s"),
            1u);
  expectOneAtATime("b");
  EXPECT_EQ(c.running, 0u);
  EXPECT_TRUE(holdsVip("b", "198.51.100.51/32"));
}

TEST_F(NotifyHooks, AFailingHookIsLoggedAndChangesNothing) {
  buildWithHooks(10ms);
  children("a").programs[kOnActive] = {10ms, 3, false};
  children("a").programs[kOnVip] = {10ms, 0, /*cannot_start=*/true};
  startAll();
  ASSERT_TRUE(untilActiveHoldingVips("a"));
  run(5s);
  EXPECT_EQ(role("a"), Role::kActive);
  EXPECT_EQ(role("b"), Role::kBackup);
  EXPECT_TRUE(holdsVip("a", "198.51.100.50/32"));
  EXPECT_TRUE(holdsVip("a", "198.51.100.51/32"));
  FakePlatform& a = *platforms_["a"];
  EXPECT_EQ(a.log().count(LogLevel::kWarning,
                          "notify command failed event=role role=ACTIVE previous=TAKING_OVER "
                          "hook=notify.active result=\"exit 3\""),
            1u);
  EXPECT_EQ(a.log().count(LogLevel::kError,
                          "cannot run the notify command event=vip vip=198.51.100.50/32 "
                          "interface=eth0 state=added hook=notify.vip: no children here; check "
                          "[notify]"),
            1u);
  EXPECT_EQ(hooks("a"), (std::vector<std::string>{"role BACKUP (role)", "role TAKING_OVER (role)",
                                                  "role ACTIVE (active)", "role ACTIVE (role)"}))
      << "the next hooks ran";
  EXPECT_EQ(a.log().count(LogLevel::kError, "ALARM"), 0u);
}

TEST_F(NotifyHooks, AHookThatAlwaysHangsKeepsAtMost64EventsWaitingAndNeverDelaysAMove) {
  conf_.notify = "role = [\"" + std::string(kOnRole) + "\"]\ntimeout = \"10m\"\n";
  buildWithHooks(1h);
  startAll();
  ASSERT_TRUE(untilActiveHoldingVips("a"));
  // Every move is three or four role changes on each director: 40 of them fill the queue.
  for (int i = 0; i < 40; ++i) {
    const std::string from = i % 2 == 0 ? "a" : "b";
    const std::string to = i % 2 == 0 ? "b" : "a";
    ASSERT_TRUE(directors_[from]->move({to, std::nullopt}));
    auto took = runUntil(2s, [&] { return role(to) == Role::kActive; });
    ASSERT_TRUE(took) << "move " << i;
    EXPECT_LT(*took, 200ms) << "move " << i;
  }
  for (const char* node : {"a", "b"}) {
    const nlohmann::json st = directors_[node]->status().at("notify");
    EXPECT_EQ(st.at("running"), 1u) << node;
    EXPECT_EQ(st.at("waiting"), 64u) << node;
    EXPECT_GT(st.at("dropped").get<uint64_t>(), 0u) << node;
    EXPECT_EQ(children(node).starts.size(), 1u) << node << ": the first still hangs";
    EXPECT_GE(platforms_[node]->log().count(LogLevel::kWarning,
                                            "notify command dropped, 64 newer "
                                            "events wait"),
              1u);
  }
}

TEST_F(NotifyHooks, AReloadOnTheActiveRunsTheHooksOfTheVipsItAddsAndRemovesWithTheNewCommands) {
  buildWithHooks(10ms);
  startAll();
  ASSERT_TRUE(untilActiveHoldingVips("a"));
  run(1s);
  size_t mark = children("a").starts.size();
  Conf c = conf_;
  c.vips.push_back("198.51.100.52/32");
  writeConf("a", c);
  reload("a");
  run(1s);
  EXPECT_EQ(hooks("a", mark), (std::vector<std::string>{"vip 198.51.100.52/32 added"}));
  EXPECT_EQ(fakes::SimChildren::env(children("a").starts.at(mark), "TANDEM_ROLE"), "ACTIVE");

  // A new vip command and timeout apply to the next event.
  // A shell line: its argv[0] is the line, which the config does not look into.
  children("a").programs["/usr/local/sbin/on-vip-2 --removed"] = {10ms, 0, false};
  c.vips.pop_back();
  c.notify = "vip = \"/usr/local/sbin/on-vip-2 --removed\"\n";
  writeConf("a", c);
  mark = children("a").starts.size();
  reload("a");
  run(1s);
  ASSERT_EQ(children("a").starts.size(), mark + 1);
  EXPECT_EQ(children("a").starts[mark].argv,
            (std::vector<std::string>{"/usr/local/sbin/on-vip-2 --removed"}));
  EXPECT_EQ(fakes::SimChildren::env(children("a").starts[mark], "TANDEM_VIP_STATE"), "removed");
  EXPECT_EQ(platforms_["a"]->log().count(LogLevel::kNotice, "reload notify: role"), 1u);
}

TEST_F(NotifyHooks, AMissingHookProgramRefusesTheConfigAtItsLine) {
  build(kPair);  // the hook programs are not installed
  DirectorOptions o;
  o.config_path = kPath;
  o.node_name = "a";
  directors_["a"] = std::make_unique<Director>(*platforms_["a"], o);
  EXPECT_FALSE(directors_["a"]->start());
  EXPECT_EQ(platforms_["a"]->log().count(LogLevel::kError,
                                         "notify.role runs /usr/local/sbin/on-role, which does "
                                         "not exist; install it, or fix the path"),
            1u);
}

}  // namespace
}  // namespace tandem::director
