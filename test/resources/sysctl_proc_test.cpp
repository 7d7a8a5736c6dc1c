// ProcSysctl and checkSysctls against the real /proc/sys, in a private network namespace this
// process creates (unshare(CLONE_NEWNET)): net.* keys there are the namespace's own, so nothing
// on the host changes. sysctl(8) is the independent writer and reader. Needs root: otherwise it
// prints SKIPPED and succeeds, unless TANDEM_TEST_NO_SKIP=1.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "must_run.h"
#include "sysctl/proc_sysctl.h"
#include "sysctl/sysctl_apply.h"

namespace tandem::resources::sysctl {
namespace {

// Runs a shell command; its output without the trailing newline.
std::string sh(const std::string& cmd, int* status = nullptr) {
  std::string out = test::sh(cmd, status);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Counts the writes that reach the real /proc/sys.
class CountingWriter final : public SysctlWriter {
 public:
  explicit CountingWriter(SysctlWriter& inner) : inner_(inner) {}
  Result<void> write(std::string_view key, std::string_view value) override {
    ++writes;
    return inner_.write(key, value);
  }
  int writes = 0;

 private:
  SysctlWriter& inner_;
};

config::Config natConfig(const char* vip, const char* real_server) {
  config::VirtualServer vs;
  vs.name = "web";
  vs.address = Endpoint::parse(vip, false).value();
  config::RealServer rs;
  rs.address = Endpoint::parse(real_server, false).value();
  rs.forwarding = config::Forwarding::kNat;
  vs.real_servers = {rs};
  config::Config cfg;
  cfg.virtual_servers = {vs};
  return cfg;
}

const std::vector<std::string> kNoInterfaces;

TEST(ProcSysctl, ReadsWhatSysctlWroteAndWritesWhatSysctlReads) {
  ProcSysctl proc;
  ASSERT_EQ(sh("sysctl -qw net.ipv4.ip_forward=0 && sysctl -n net.ipv4.ip_forward"), "0");
  auto v = proc.read("net.ipv4.ip_forward");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(*v, "0");
  ASSERT_TRUE(proc.write("net.ipv4.ip_forward", "1"));
  EXPECT_EQ(sh("sysctl -n net.ipv4.ip_forward"), "1");
}

TEST(ProcSysctl, AnInterfaceNameWithADotIsReachedThroughSlashes) {
  int st = 0;
  std::string out = sh("ip link add pt0.5 type veth peer name pt1", &st);
  ASSERT_EQ(st, 0) << out;
  ASSERT_EQ(sh("sysctl -qw net.ipv4.conf.pt0/5.arp_ignore=8 && cat "
               "/proc/sys/net/ipv4/conf/pt0.5/arp_ignore"),
            "8");
  ProcSysctl proc;
  auto v = proc.read(sysctlKey({"net", "ipv4", "conf", "pt0.5", "arp_ignore"}));
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(*v, "8");
  sh("ip link del pt0.5");
}

TEST(ProcSysctl, AMissingKeyIsNotFoundAndNamesTheKey) {
  ProcSysctl proc;
  auto v = proc.read("net.ipv4.conf.nosuchif0.arp_ignore");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, ErrorCode::kNotFound);
  EXPECT_NE(v.error().message.find("net.ipv4.conf.nosuchif0.arp_ignore"), std::string::npos)
      << v.error().message;
  auto w = proc.write("net.ipv4.conf.nosuchif0.arp_ignore", "1");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, ErrorCode::kNotFound);
}

TEST(ProcSysctl, AValueTheKernelRejectsIsAnError) {
  ProcSysctl proc;
  auto w = proc.write("net.ipv4.ip_forward", "not-a-number");
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("net.ipv4.ip_forward"), std::string::npos);
}

TEST(SetSysctls, AWrongValueIsSetAndLogged) {
  ASSERT_EQ(sh("sysctl -qw net.ipv4.ip_forward=0 && sysctl -n net.ipv4.ip_forward"), "0");
  ProcSysctl proc;
  CountingWriter writer(proc);
  auto lines =
      checkSysctls(natConfig("203.0.113.10:80", "198.51.100.21:80"), kNoInterfaces, proc, &writer);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, LogLevel::kNotice);
  EXPECT_EQ(lines[0].text, "set net.ipv4.ip_forward=1 (was 0) for nat forwarding svc=web");
  EXPECT_EQ(writer.writes, 1);
  EXPECT_EQ(sh("sysctl -n net.ipv4.ip_forward"), "1");
}

TEST(SetSysctls, ARightValueIsLeftAlone) {
  ASSERT_EQ(sh("sysctl -qw net.ipv4.ip_forward=1 && sysctl -n net.ipv4.ip_forward"), "1");
  ProcSysctl proc;
  CountingWriter writer(proc);
  auto lines =
      checkSysctls(natConfig("203.0.113.10:80", "198.51.100.21:80"), kNoInterfaces, proc, &writer);
  EXPECT_TRUE(lines.empty());
  EXPECT_EQ(writer.writes, 0);
  EXPECT_EQ(sh("sysctl -n net.ipv4.ip_forward"), "1");
}

TEST(SetSysctls, Ipv6ForwardingIsSetForAnIpv6NatService) {
  if (sh("test -e /proc/sys/net/ipv6 && echo yes") != "yes") {
    ASSERT_FALSE(tandem::test::mustRun()) << "no IPv6 in this kernel";
    GTEST_SKIP() << "no IPv6 in this kernel";
  }
  ASSERT_EQ(sh("sysctl -qw net.ipv6.conf.all.forwarding=0 && sysctl -n "
               "net.ipv6.conf.all.forwarding"),
            "0");
  ProcSysctl proc;
  auto lines = checkSysctls(natConfig("[2001:db8::10]:80", "[2001:db8:1::21]:80"), kNoInterfaces,
                            proc, &proc);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, "set net.ipv6.conf.all.forwarding=1 (was 0) for nat forwarding svc=web");
  EXPECT_EQ(sh("sysctl -n net.ipv6.conf.all.forwarding"), "1");
}

TEST(CheckSysctls, WithoutSetSysctlsTheRealKernelIsOnlyRead) {
  ASSERT_EQ(sh("sysctl -qw net.ipv4.ip_forward=0 && sysctl -n net.ipv4.ip_forward"), "0");
  ProcSysctl proc;
  auto lines =
      checkSysctls(natConfig("203.0.113.10:80", "198.51.100.21:80"), kNoInterfaces, proc, nullptr);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, LogLevel::kWarning);
  EXPECT_EQ(sh("sysctl -n net.ipv4.ip_forward"), "0");
}

}  // namespace
}  // namespace tandem::resources::sysctl

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  using tandem::test::cannotRun;
  const std::string why =
      tandem::test::enterPrivateNetns("a private network namespace, /proc/sys writes");
  if (!why.empty()) return cannotRun(why);
  // From here on every net.* sysctl is this namespace's: the namespace dies with this process.
  if (tandem::resources::sysctl::sh("command -v sysctl").empty()) {
    return cannotRun("no sysctl(8), the independent reader (procps)");
  }
  return RUN_ALL_TESTS();
}
