#include "sysctl/sysctl_plan.h"

#include <gtest/gtest.h>

#include "resources/fake_sysctl.h"
#include "sysctl/sysctl_apply.h"

namespace tandem::resources::sysctl {
namespace {

using config::Forwarding;

Endpoint ep(const char* text) { return Endpoint::parse(text, true).value(); }

config::RealServer real(const char* address, Forwarding f) {
  config::RealServer rs;
  rs.address = ep(address);
  rs.forwarding = f;
  return rs;
}

config::VirtualServer service(const char* name, const char* vip,
                              std::vector<config::RealServer> rss) {
  config::VirtualServer vs;
  vs.name = name;
  vs.address = ep(vip);
  vs.real_servers = std::move(rss);
  return vs;
}

config::Vip vipOn(const char* prefix, const char* ifname) {
  config::Vip v;
  v.address = *IpPrefix::parse(prefix);
  v.interface = ifname;
  return v;
}

const std::vector<std::string> kEth0{"eth0"};

// A director with every setting right for all the tests below.
fakes::FakeSysctl healthyHost() {
  fakes::FakeSysctl s;
  s.values = {{"net.ipv4.ip_forward", "1"},
              {"net.ipv6.conf.all.forwarding", "1"},
              {"net.ipv4.conf.all.arp_ignore", "0"},
              {"net.ipv4.conf.eth0.arp_ignore", "0"},
              {"net.ipv4.conf.eth0/100.arp_ignore", "0"}};
  return s;
}

TEST(SysctlKey, InterfaceDotsBecomeSlashesAndBackInProcPath) {
  EXPECT_EQ(sysctlKey({"net", "ipv4", "conf", "eth0.100", "rp_filter"}),
            "net.ipv4.conf.eth0/100.rp_filter");
  EXPECT_EQ(procPath("net.ipv4.conf.eth0/100.rp_filter"), "net/ipv4/conf/eth0.100/rp_filter");
  EXPECT_EQ(procPath("net.ipv4.ip_forward"), "net/ipv4/ip_forward");
}

TEST(SysctlPlan, NatWithForwardingOffWarnsWithTheFix) {
  config::Config cfg;
  cfg.virtual_servers = {
      service("web", "203.0.113.10:80", {real("198.51.100.21:80", Forwarding::kNat)})};
  auto host = healthyHost();
  host.values["net.ipv4.ip_forward"] = "0";
  auto findings = sysctlPlan(cfg, kEth0, host);
  ASSERT_EQ(findings.size(), 1u);
  const SysctlFinding& f = findings[0];
  EXPECT_EQ(f.severity, LogLevel::kWarning);
  EXPECT_EQ(f.key, "net.ipv4.ip_forward");
  EXPECT_EQ(f.current, "0");
  EXPECT_EQ(f.required, "1");
  EXPECT_TRUE(f.settable);
  EXPECT_EQ(describe(f),
            "sysctl net.ipv4.ip_forward=0 but nat forwarding needs 1: replies from the real "
            "servers are routed through the director, which must forward them; fix: sysctl -w "
            "net.ipv4.ip_forward=1, and persist it in /etc/sysctl.d/ svc=web");
}

// The 6.1 kernel's defaults for connection sync.
fakes::FakeSysctl syncDefaults() {
  fakes::FakeSysctl s = healthyHost();
  s.values["net.ipv4.vs.sync_threshold"] = "3\t50";
  s.values["net.ipv4.vs.sync_refresh_period"] = "0";
  s.values["net.ipv4.vs.sync_version"] = "1";
  return s;
}

config::Config withSync() {
  config::Config cfg;
  cfg.sync.enabled = true;
  cfg.sync.interface = "eth1";
  cfg.sync.sync_id = 9;
  return cfg;
}

TEST(SysctlPlan, SyncWithTheKernelDefaultsWarnsThatQuietSessionsExpireOnTheBackup) {
  auto findings = sysctlPlan(withSync(), kEth0, syncDefaults());
  ASSERT_EQ(findings.size(), 1u);
  const SysctlFinding& f = findings[0];
  EXPECT_EQ(f.key, "net.ipv4.vs.sync_refresh_period");
  EXPECT_EQ(f.required, "60");
  EXPECT_TRUE(f.settable);
  EXPECT_EQ(describe(f),
            "sysctl net.ipv4.vs.sync_refresh_period=0 but connection sync of long-lived quiet "
            "sessions needs 60: a connection is sent again only every 50 packets, so a session "
            "quieter than that per connection timeout (15 min established) has expired on the "
            "backup when it takes over; fix: sysctl -w net.ipv4.vs.sync_refresh_period=60 on "
            "every director (a connection is then sent again at most once a minute while it "
            "carries traffic), and persist it in /etc/sysctl.d/ sync_id=9");
}

TEST(SysctlPlan, SyncSettingsThatHideSessionsFromTheBackupAreNamed) {
  auto host = syncDefaults();
  host.values["net.ipv4.vs.sync_threshold"] = "3\t0";
  host.values["net.ipv4.vs.sync_version"] = "0";
  auto findings = sysctlPlan(withSync(), kEth0, host);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].key, "net.ipv4.vs.sync_version");
  EXPECT_EQ(findings[0].required, "1");
  EXPECT_EQ(findings[1].key, "net.ipv4.vs.sync_refresh_period");
  EXPECT_NE(findings[1].why.find("each connection is sent to the backup once"), std::string::npos)
      << findings[1].why;
}

TEST(SysctlPlan, SyncIsQuietWithARefreshPeriodOrWhenDisabled) {
  auto host = syncDefaults();
  host.values["net.ipv4.vs.sync_refresh_period"] = "60";
  EXPECT_TRUE(sysctlPlan(withSync(), kEth0, host).empty());
  config::Config off = withSync();
  off.sync.enabled = false;
  EXPECT_TRUE(sysctlPlan(off, kEth0, syncDefaults()).empty());
  // No IPVS module yet (nothing under net.ipv4.vs): nothing to judge.
  EXPECT_TRUE(sysctlPlan(withSync(), kEth0, healthyHost()).empty());
}

TEST(SysctlPlan, NatWithForwardingOnIsQuiet) {
  config::Config cfg;
  cfg.virtual_servers = {
      service("web", "203.0.113.10:80", {real("198.51.100.21:80", Forwarding::kNat)}),
      service("v6", "[2001:db8::10]:80", {real("[2001:db8:1::21]:80", Forwarding::kNat)})};
  auto host = healthyHost();
  EXPECT_TRUE(sysctlPlan(cfg, kEth0, host).empty());
}

TEST(SysctlPlan, Ipv6NatNeedsIpv6ForwardingOnlyAndWarnsAboutRouterAdvertisements) {
  config::Config cfg;
  cfg.virtual_servers = {
      service("v6", "[2001:db8::10]:80", {real("[2001:db8:1::21]:80", Forwarding::kNat)})};
  auto host = healthyHost();
  host.values["net.ipv4.ip_forward"] = "0";  // no IPv4 nat service: not needed
  host.values["net.ipv6.conf.all.forwarding"] = "0";
  auto findings = sysctlPlan(cfg, kEth0, host);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].key, "net.ipv6.conf.all.forwarding");
  EXPECT_EQ(findings[0].context, "svc=v6");
  EXPECT_NE(findings[0].fix.find("accept_ra"), std::string::npos) << findings[0].fix;
}

TEST(SysctlPlan, DrAndTunNeedNoForwardingOnTheDirector) {
  config::Config cfg;
  cfg.virtual_servers = {service(
      "web", "203.0.113.10:80",
      {real("198.51.100.21:80", Forwarding::kDr), real("198.51.100.22:80", Forwarding::kTun)})};
  auto host = healthyHost();
  host.values["net.ipv4.ip_forward"] = "0";
  for (const auto& f : sysctlPlan(cfg, kEth0, host)) {
    EXPECT_EQ(f.severity, LogLevel::kNotice) << describe(f);
    EXPECT_TRUE(f.key.empty());
  }
}

TEST(SysctlPlan, ServicesSharingAKeyGiveOneFindingNamingThemAll) {
  config::Config cfg;
  cfg.virtual_servers = {
      service("web", "203.0.113.10:80", {real("198.51.100.21:80", Forwarding::kNat)}),
      service("api", "203.0.113.11:443", {real("198.51.100.21:443", Forwarding::kNat)})};
  auto host = healthyHost();
  host.values["net.ipv4.ip_forward"] = "0";
  auto findings = sysctlPlan(cfg, kEth0, host);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].context, "svc=api,web");
}

TEST(SysctlPlan, UnreadableForwardingIsAWarningButNotSettable) {
  config::Config cfg;
  cfg.virtual_servers = {
      service("v6", "[2001:db8::10]:80", {real("[2001:db8:1::21]:80", Forwarding::kNat)})};
  auto host = healthyHost();
  host.values.erase("net.ipv6.conf.all.forwarding");  // IPv6 disabled
  auto findings = sysctlPlan(cfg, kEth0, host);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_FALSE(findings[0].settable);
  EXPECT_EQ(findings[0].current, "");
  EXPECT_NE(describe(findings[0]).find("=unreadable but"), std::string::npos);
  EXPECT_NE(findings[0].why.find("cannot be read"), std::string::npos);
}

TEST(SysctlPlan, ArpIgnoreEightOnAVipInterfaceWarnsAndIsNotSet) {
  config::Config cfg;
  cfg.vips = {vipOn("203.0.113.10/24", "eth0")};
  auto host = healthyHost();
  host.values["net.ipv4.conf.eth0.arp_ignore"] = "8";
  auto findings = sysctlPlan(cfg, kEth0, host);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].key, "net.ipv4.conf.eth0.arp_ignore");
  EXPECT_EQ(findings[0].current, "8");
  EXPECT_FALSE(findings[0].settable) << "the operator chose it; tandem only says why it breaks";
  EXPECT_EQ(findings[0].context, "interface=eth0");
}

TEST(SysctlPlan, ArpIgnoreEightOnAllCountsForEveryVipInterface) {
  config::Config cfg;
  cfg.vips = {vipOn("203.0.113.10/24", "eth0"), vipOn("198.51.100.10/24", "eth0.100")};
  std::vector<std::string> ifaces{"eth0", "eth0.100"};
  auto host = healthyHost();
  host.values["net.ipv4.conf.all.arp_ignore"] = "8";
  auto findings = sysctlPlan(cfg, ifaces, host);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].key, "net.ipv4.conf.all.arp_ignore");
  EXPECT_EQ(findings[0].context, "interface=eth0,eth0.100");
}

TEST(SysctlPlan, ArpIgnoreOneAndTwoAndOtherNodesInterfacesAreLeftAlone) {
  config::Config cfg;
  cfg.vips = {vipOn("203.0.113.10/24", "eth0"), vipOn("198.51.100.10/24", "eth1"),
              vipOn("2001:db8::10/64", "eth0")};
  auto host = healthyHost();
  host.values["net.ipv4.conf.eth0.arp_ignore"] = "1";
  host.values["net.ipv4.conf.all.arp_ignore"] = "2";
  host.values["net.ipv4.conf.eth1.arp_ignore"] = "8";  // not this node's interface
  EXPECT_TRUE(sysctlPlan(cfg, kEth0, host).empty());
}

TEST(SysctlPlan, DrRealServerGetsOneNoteListingEveryVipItServes) {
  config::Config cfg;
  cfg.virtual_servers = {
      service("web", "203.0.113.10:80", {real("198.51.100.21:80", Forwarding::kDr)}),
      service("api", "203.0.113.11:443", {real("198.51.100.21:443", Forwarding::kDr)})};
  auto host = healthyHost();
  auto findings = sysctlPlan(cfg, kEth0, host);
  ASSERT_EQ(findings.size(), 1u);
  const SysctlFinding& f = findings[0];
  EXPECT_EQ(f.severity, LogLevel::kNotice);
  EXPECT_EQ(f.purpose, "real server 198.51.100.21");
  EXPECT_EQ(f.context, "svc=api,web forwarding=dr");
  EXPECT_EQ(f.fix,
            "on that server: add 203.0.113.10/32, 203.0.113.11/32 to lo (or a dummy interface), "
            "and set net.ipv4.conf.all.arp_ignore=1 and net.ipv4.conf.all.arp_announce=2 (so "
            "it answers no ARP request for the VIP and never uses it as an ARP source)");
}

TEST(SysctlPlan, Ipv6DrRealServerGetsNoArpAdvice) {
  config::Config cfg;
  cfg.virtual_servers = {
      service("v6", "[2001:db8::10]:80", {real("[2001:db8:1::21]:80", Forwarding::kDr)})};
  auto host = healthyHost();
  auto findings = sysctlPlan(cfg, kEth0, host);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].fix.find("2001:db8::10/128 to lo"), std::string::npos);
  EXPECT_EQ(findings[0].fix.find("arp_ignore"), std::string::npos) << findings[0].fix;
}

TEST(SysctlPlan, TunRealServerNeedsTheTunnelDeviceAndLooseReversePathFilter) {
  config::Config cfg;
  auto ipip = real("198.51.100.21:80", Forwarding::kTun);
  auto gre = real("198.51.100.22:80", Forwarding::kTun);
  gre.tunnel_type = config::TunnelType::kGre;
  auto gue = real("198.51.100.23:80", Forwarding::kTun);
  gue.tunnel_type = config::TunnelType::kGue;
  gue.tunnel_port = 6080;
  cfg.virtual_servers = {service("web", "203.0.113.10:80", {ipip, gre, gue})};
  auto host = healthyHost();
  auto findings = sysctlPlan(cfg, kEth0, host);
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].purpose, "real server 198.51.100.21");
  EXPECT_NE(findings[0].fix.find("modprobe ipip, ip link set tunl0 up"), std::string::npos);
  EXPECT_NE(findings[0].fix.find("net.ipv4.conf.tunl0.rp_filter to 0 or 2"), std::string::npos);
  EXPECT_NE(findings[1].fix.find("modprobe ip_gre, ip link set gre0 up"), std::string::npos);
  EXPECT_NE(findings[1].fix.find("net.ipv4.conf.gre0.rp_filter"), std::string::npos);
  EXPECT_NE(findings[2].fix.find("ip fou add port 6080 gue"), std::string::npos) << findings[2].fix;
  for (const auto& f : findings) EXPECT_EQ(f.context, "svc=web forwarding=tun");
}

TEST(SysctlPlan, NatRealServersGetNoGuidance) {
  config::Config cfg;
  cfg.virtual_servers = {service(
      "web", "203.0.113.10:80",
      {real("198.51.100.21:80", Forwarding::kNat), real("198.51.100.22:80", Forwarding::kDr)})};
  auto host = healthyHost();
  auto findings = sysctlPlan(cfg, kEth0, host);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].purpose, "real server 198.51.100.22");
}

TEST(SysctlPlan, FwmarkServiceNamesTheMarkInsteadOfAVip) {
  config::Config cfg;
  config::VirtualServer vs;
  vs.name = "marked";
  vs.fwmark = 7;
  vs.real_servers = {real("198.51.100.21", Forwarding::kDr)};
  cfg.virtual_servers = {vs};
  auto host = healthyHost();
  auto findings = sysctlPlan(cfg, kEth0, host);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].fix.find("add the addresses firewall mark 7 matches to lo"),
            std::string::npos)
      << findings[0].fix;
}

// checkSysctls: what the daemon logs, and what it writes when set_sysctls is on.

config::Config natConfig() {
  config::Config cfg;
  cfg.virtual_servers = {
      service("web", "203.0.113.10:80", {real("198.51.100.21:80", Forwarding::kNat)})};
  return cfg;
}

TEST(CheckSysctls, WithoutSetSysctlsItOnlyWarns) {
  auto host = healthyHost();
  host.values["net.ipv4.ip_forward"] = "0";
  auto lines = checkSysctls(natConfig(), kEth0, host, nullptr);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, LogLevel::kWarning);
  EXPECT_TRUE(host.writes.empty());
  EXPECT_EQ(host.values["net.ipv4.ip_forward"], "0");
}

TEST(CheckSysctls, SetSysctlsSetsAWrongValueAndSaysWhatItWas) {
  auto host = healthyHost();
  host.values["net.ipv4.ip_forward"] = "0";
  auto lines = checkSysctls(natConfig(), kEth0, host, &host);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, LogLevel::kNotice);
  EXPECT_EQ(lines[0].text, "set net.ipv4.ip_forward=1 (was 0) for nat forwarding svc=web");
  ASSERT_EQ(host.writes.size(), 1u);
  EXPECT_EQ(host.writes[0], std::make_pair(std::string("net.ipv4.ip_forward"), std::string("1")));
}

TEST(CheckSysctls, SetSysctlsLeavesARightValueAlone) {
  auto host = healthyHost();
  auto lines = checkSysctls(natConfig(), kEth0, host, &host);
  EXPECT_TRUE(lines.empty());
  EXPECT_TRUE(host.writes.empty());
}

TEST(CheckSysctls, SetSysctlsNeverWritesWhatIsNotItsToSet) {
  config::Config cfg = natConfig();
  cfg.vips = {vipOn("203.0.113.10/24", "eth0")};
  auto host = healthyHost();
  host.values["net.ipv4.conf.eth0.arp_ignore"] = "8";
  auto lines = checkSysctls(cfg, kEth0, host, &host);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, LogLevel::kWarning);
  EXPECT_TRUE(host.writes.empty());
}

TEST(CheckSysctls, ARefusedWriteIsAWarningWithTheFix) {
  auto host = healthyHost();
  host.values["net.ipv4.ip_forward"] = "0";
  host.refuse["net.ipv4.ip_forward"] = Error{ErrorCode::kPermissionDenied, "read-only /proc/sys"};
  auto lines = checkSysctls(natConfig(), kEth0, host, &host);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, LogLevel::kWarning);
  EXPECT_NE(lines[0].text.find("fix: sysctl -w net.ipv4.ip_forward=1"), std::string::npos);
  EXPECT_NE(lines[0].text.find("could not set it: read-only /proc/sys"), std::string::npos)
      << lines[0].text;
}

TEST(CheckSysctls, AWriteThatDoesNotStickIsNotReportedAsSet) {
  auto host = healthyHost();
  host.values["net.ipv4.ip_forward"] = "0";
  host.ignore_writes["net.ipv4.ip_forward"] = "0";
  auto lines = checkSysctls(natConfig(), kEth0, host, &host);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, LogLevel::kWarning);
  EXPECT_NE(lines[0].text.find("reads back as 0"), std::string::npos) << lines[0].text;
}

TEST(CheckSysctls, RealServerGuidanceIsANotice) {
  config::Config cfg;
  cfg.virtual_servers = {
      service("web", "203.0.113.10:80", {real("198.51.100.21:80", Forwarding::kDr)})};
  auto host = healthyHost();
  auto lines = checkSysctls(cfg, kEth0, host, &host);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, LogLevel::kNotice);
  EXPECT_EQ(lines[0].text.rfind("sysctl guidance for real server 198.51.100.21: dr forwarding", 0),
            0u)
      << lines[0].text;
  EXPECT_TRUE(host.writes.empty());
}

}  // namespace
}  // namespace tandem::resources::sysctl
