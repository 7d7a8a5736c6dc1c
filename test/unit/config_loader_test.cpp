#include "config/config_loader.h"

#include <gtest/gtest.h>

#include <map>

#include "fakes/fake_file_system.h"

namespace tandem::config {
namespace {

using namespace std::chrono_literals;

// Key files exist where the test says (32 bytes, as `tandem keygen` writes them); everything
// else is missing.
const std::string kKey(32, 'k');

class ConfigLoaderTest : public ::testing::Test {
 protected:
  ConfigLoaderTest() { fs_.write("/etc/tandem/authkey", kKey, 0600); }

  LoadResult load(const std::string& text) {
    return loadConfigText(text, "/etc/tandem/tandem.conf", fs_);
  }
  // The diagnostics as "line:col: message" lines.
  static std::vector<std::string> lines(const LoadResult& r) {
    std::vector<std::string> out;
    for (const auto& d : r.diagnostics.sorted()) {
      out.push_back(std::to_string(d.line) + ":" + std::to_string(d.column) + ": " +
                    (d.severity == Diagnostic::Severity::kWarning ? "warning: " : "") + d.message);
    }
    return out;
  }

  // The same lines, each after a newline.
  static std::string said(const LoadResult& r) {
    std::string out;
    for (const auto& l : lines(r)) out += "\n" + l + "\n";
    return out;
  }

  fakes::FakeFileSystem fs_;
};

constexpr const char* kMinimal = R"(
[cluster]
name = "web"
[[node]]
name = "lb1"
interfaces = ["eth0"]
)";

TEST_F(ConfigLoaderTest, MinimalFileGetsTheDocumentedDefaults) {
  LoadResult r = load(kMinimal);
  ASSERT_TRUE(r.ok()) << r.diagnostics.formatAll();
  const Config& c = *r.config;
  EXPECT_EQ(c.cluster.name, "web");
  EXPECT_EQ(c.cluster.group, "tandem");
  ASSERT_EQ(c.cluster.keys.size(), 1u);
  EXPECT_EQ(c.cluster.keys[0].file, "/etc/tandem/authkey");
  EXPECT_EQ(c.cluster.active_key, 1u);
  EXPECT_EQ(c.cluster.heartbeat_interval, 200ms);
  EXPECT_EQ(c.cluster.dead_time, 1000ms);
  EXPECT_EQ(c.cluster.failback, FailbackPolicy::kManual);
  EXPECT_EQ(c.cluster.quorum_hold, 8000ms);
  EXPECT_TRUE(c.cluster.tiebreaker.targets.empty());
  EXPECT_FALSE(c.cluster.fence.command);
  ASSERT_EQ(c.nodes.size(), 1u);
  EXPECT_EQ(c.nodes[0].priority, 100);
  EXPECT_FALSE(c.sync.enabled);
  EXPECT_EQ(c.ipvs.manage, IpvsManage::kOwned);
  EXPECT_EQ(c.daemon.state_dir, "/var/lib/tandem");
  EXPECT_TRUE(r.diagnostics.all().empty());
}

TEST_F(ConfigLoaderTest, ATiebreakerSlowerThanDeadTimeIsWarnedAbout) {
  std::string base = R"(
[cluster]
name = "web"
[cluster.tiebreaker]
targets = ["198.51.100.1"]
)";
  std::string node = "[[node]]\nname = \"lb1\"\n";
  LoadResult fine = load(base + node);
  ASSERT_TRUE(fine.ok()) << fine.diagnostics.formatAll();
  EXPECT_EQ(fine.config->cluster.tiebreaker.interval, 200ms);
  EXPECT_EQ(fine.config->cluster.tiebreaker.timeout, 300ms);
  EXPECT_TRUE(fine.diagnostics.all().empty()) << fine.diagnostics.formatAll();

  LoadResult slow = load(base + "interval = \"500ms\"\n" + node);
  ASSERT_TRUE(slow.ok());
  EXPECT_EQ(lines(slow), (std::vector<std::string>{
                             "4:1: warning: tiebreaker interval + timeout (500ms + 300ms) is not "
                             "under dead_time - heartbeat_interval (800ms): a director cut off "
                             "from its peer and from the targets could take over before its "
                             "tiebreaker fails; lower them (the defaults are 200ms and 300ms)"}));
}

TEST_F(ConfigLoaderTest, QuorumHoldIsReadFromZeroToAMinuteAndRefusedBeyond) {
  auto withHold = [](const std::string& hold) {
    return "[cluster]\nname = \"web\"\nquorum_hold = \"" + hold + "\"\n[[node]]\nname = \"lb1\"\n";
  };
  for (auto [text, value] : {std::pair{"3s", 3000ms}, {"0s", 0ms}, {"1m", 60000ms}}) {
    LoadResult r = load(withHold(text));
    ASSERT_TRUE(r.ok()) << text << ": " << r.diagnostics.formatAll();
    EXPECT_EQ(r.config->cluster.quorum_hold, value) << text;
  }
  LoadResult r = load(withHold("61s"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(lines(r), (std::vector<std::string>{
                          "3:15: cluster.quorum_hold: \"61s\" is out of range; it must be a "
                          "duration from \"0s\" to \"1m\""}));
}

TEST_F(ConfigLoaderTest, ReadsAWholeServiceWithCheckInheritance) {
  LoadResult r = load(std::string(kMinimal) + R"(
[[vip]]
address = "198.51.100.10/24"
interface = "eth0"
label = "eth0:web"
announce_count = 3

[[virtual_server]]
name = "web"
address = "198.51.100.10:80"
scheduler = "sh"
scheduler_flags = ["port"]
persistence_timeout = "10m"
persistence_netmask = "255.255.255.0"
fallback = "127.0.0.1:80"
[virtual_server.check]
type = "http"
path = "/index.html"
expect_body = "Test Page"
expect_status = ["200", "301-302"]
interval = "2s"
timeout = "1500ms"
[[virtual_server.real_server]]
address = "203.0.113.11"
weight = 3
[[virtual_server.real_server]]
address = "203.0.113.12:8080"
[virtual_server.real_server.check]
type = "tcp"
rise = 5
)");
  ASSERT_TRUE(r.ok()) << r.diagnostics.formatAll();
  const VirtualServer& vs = r.config->virtual_servers.at(0);
  EXPECT_EQ(vs.name, "web");
  EXPECT_EQ(vs.scheduler, "sh");
  EXPECT_EQ(vs.persistence_timeout, 600000ms);
  EXPECT_EQ(netmaskLength(*vs.persistence_netmask), 24);
  ASSERT_EQ(vs.real_servers.size(), 2u);
  const RealServer& a = vs.real_servers[0];
  EXPECT_EQ(a.address.port, 80) << "a real server without a port takes the service's";
  EXPECT_EQ(a.weight, 3);
  EXPECT_EQ(a.forwarding, Forwarding::kNat);
  EXPECT_EQ(a.check.type, CheckType::kHttp);
  EXPECT_EQ(a.check.path, "/index.html");
  ASSERT_EQ(a.check.expect_status.size(), 2u);
  EXPECT_EQ(a.check.expect_status[1].low, 301);
  EXPECT_EQ(a.check.expect_status[1].high, 302);
  EXPECT_EQ(a.check.timeout, 1500ms);
  const RealServer& b = vs.real_servers[1];
  EXPECT_EQ(b.address.port, 8080);
  EXPECT_EQ(b.check.type, CheckType::kTcp) << "the override changes the type";
  EXPECT_EQ(b.check.rise, 5);
  EXPECT_EQ(b.check.interval, 2000ms) << "and keeps what it does not name";
  EXPECT_EQ(r.config->vips.at(0).label, "eth0:web");
  EXPECT_EQ(r.config->vips.at(0).announce_count, 3);
}

TEST_F(ConfigLoaderTest, HttpsChecksReadMaxResponseAndCaFileWithInheritance) {
  LoadResult r = load(std::string(kMinimal) + R"(
[[virtual_server]]
address = "198.51.100.10:443"
[virtual_server.check]
type = "https"
tls_verify = true
ca_file = "/etc/tandem/rs-ca.pem"
[[virtual_server.real_server]]
address = "203.0.113.11"
[[virtual_server.real_server]]
address = "203.0.113.12"
[virtual_server.real_server.check]
max_response = 256
ca_file = ""
)");
  ASSERT_TRUE(r.ok()) << r.diagnostics.formatAll();
  const VirtualServer& vs = r.config->virtual_servers.at(0);
  EXPECT_EQ(vs.check.max_response, 65536u) << "the documented default";
  EXPECT_EQ(vs.real_servers.at(0).check.ca_file, "/etc/tandem/rs-ca.pem");
  EXPECT_EQ(vs.real_servers.at(1).check.max_response, 256u);
  EXPECT_EQ(vs.real_servers.at(1).check.ca_file, "") << "empty: back to the system's store";
}

TEST_F(ConfigLoaderTest, ListsEveryErrorNotOnlyTheFirst) {
  LoadResult r = load(R"(
[cluster]
name = "web"
dead_time = "1x"
[[node]]
name = "lb1"
priority = 256
interfaces = ["eth0"]
[[vip]]
address = "198.51.100.10/24"
interface = "eth7"
)");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(lines(r), (std::vector<std::string>{
                          "4:13: cluster.dead_time: \"1x\" is not a duration; write a number "
                          "with ms, s, m or h, e.g. \"250ms\", \"2s\" or \"5m\"",
                          "7:12: node.priority: 256 is out of range; it must be an integer from "
                          "0 to 255",
                          "11:13: VIP 198.51.100.10/24 is on interface \"eth7\", which no "
                          "[[node]] lists; add it to the interfaces of the nodes that may carry "
                          "it (they list \"eth0\")",
                      }));
}

TEST_F(ConfigLoaderTest, OnlyTheFirstHundredUnknownKeysOfATableGetAHint) {
  std::string text = std::string(kMinimal) + "[daemon]\n";
  for (int i = 0; i < 101; ++i) text += "state_dir" + std::to_string(i) + " = 1\n";
  LoadResult r = load(text);
  std::vector<std::string> got;
  for (const auto& d : r.diagnostics.sorted()) got.push_back(d.message);
  ASSERT_EQ(got.size(), 101u);
  size_t hinted = 0;
  for (const auto& m : got) hinted += m.find("; ") != std::string::npos ? 1 : 0;
  EXPECT_EQ(hinted, 100u);
  // The first hundred in the file's order (not the table's, which is by name: state_dir10
  // comes before state_dir2 there).
  EXPECT_EQ(got.back(), "unknown key \"state_dir100\" in [daemon]");
}

TEST_F(ConfigLoaderTest, RelativeKeyFilesResolveAgainstTheConfigDirectory) {
  fs_.clear();
  fs_.write("/etc/tandem/keys/a", kKey, 0600);
  fs_.write("/etc/tandem/keys/b", kKey, 0644);
  LoadResult r = load(R"(
[cluster]
name = "web"
active_key = 2
[[cluster.key]]
id = 1
file = "keys/a"
[[cluster.key]]
id = 2
file = "keys/b"
[[node]]
name = "lb1"
)");
  EXPECT_EQ(lines(r),
            (std::vector<std::string>{
                "10:8: key 2: the key file /etc/tandem/keys/b has mode 0644, so its group or "
                "others have access; run `chmod 0600 /etc/tandem/keys/b`",
            }));
}

// A key from a systemd credential (LoadCredential=): read from $CREDENTIALS_DIRECTORY.
constexpr const char* kCredentialKey = R"(
[cluster]
name = "web"
[[cluster.key]]
id = 1
credential = "tandem.authkey"
[[node]]
name = "lb1"
)";

TEST_F(ConfigLoaderTest, AKeyFromACredentialIsReadFromTheCredentialsDirectory) {
  fs_.credentials_directory = "/run/credentials/tandemd.service";
  fs_.write("/run/credentials/tandemd.service/tandem.authkey", kKey, 0400);
  LoadResult r = load(kCredentialKey);
  ASSERT_TRUE(r.ok()) << r.diagnostics.formatAll();
  EXPECT_TRUE(lines(r).empty()) << r.diagnostics.formatAll();
  const AuthKey& k = r.config->cluster.keys.at(0);
  EXPECT_EQ(k.credential, "tandem.authkey");
  EXPECT_EQ(k.file, "");
  EXPECT_EQ(r.config->keyPath(k, fs_.credentialsDirectory()),
            "/run/credentials/tandemd.service/tandem.authkey");
}

TEST_F(ConfigLoaderTest, ACredentialKeyOutsideItsUnitIsAWarningAndAMissingOneAnError) {
  LoadResult shell = load(kCredentialKey);
  ASSERT_TRUE(shell.ok()) << shell.diagnostics.formatAll();
  ASSERT_EQ(lines(shell).size(), 1u);
  EXPECT_EQ(lines(shell)[0].rfind("6:14: warning: key 1: the systemd credential \"tandem.authkey\" "
                                  "is read from $CREDENTIALS_DIRECTORY, which is not set here",
                                  0),
            0u)
      << lines(shell)[0];

  fs_.credentials_directory = "/run/credentials/tandemd.service";
  LoadResult unit = load(kCredentialKey);
  EXPECT_FALSE(unit.ok());
  EXPECT_EQ(lines(unit), (std::vector<std::string>{
                             "6:14: key 1: no systemd credential \"tandem.authkey\" in "
                             "/run/credentials/tandemd.service; the unit must load it: "
                             "LoadCredential=tandem.authkey:/path/to/key, or "
                             "LoadCredentialEncrypted= with a file from systemd-creds encrypt"}));
}

TEST_F(ConfigLoaderTest, AKeyWithBothAFileAndACredentialOrABadNameIsRefused) {
  LoadResult both = load(R"(
[cluster]
name = "web"
[[cluster.key]]
id = 1
file = "/etc/tandem/authkey"
credential = "tandem.authkey"
[[node]]
name = "lb1"
)");
  EXPECT_FALSE(both.ok());
  ASSERT_EQ(lines(both).size(), 1u) << both.diagnostics.formatAll();
  EXPECT_NE(lines(both)[0].find("7:14: cluster.key.credential: a key has either a file or a "
                                "credential, this one has both"),
            std::string::npos)
      << lines(both)[0];

  LoadResult bad = load(R"(
[cluster]
name = "web"
[[cluster.key]]
id = 1
credential = "../authkey"
[[node]]
name = "lb1"
)");
  EXPECT_FALSE(bad.ok());
  ASSERT_EQ(lines(bad).size(), 1u) << bad.diagnostics.formatAll();
  EXPECT_NE(lines(bad)[0].find("the name holds a '/'"), std::string::npos) << lines(bad)[0];
}

TEST_F(ConfigLoaderTest, SeveralKeysNeedAnActiveOne) {
  fs_.write("/k1", kKey, 0600);
  fs_.write("/k2", kKey, 0400);
  LoadResult r = load(R"(
[cluster]
name = "web"
[[cluster.key]]
id = 1
file = "/k1"
[[cluster.key]]
id = 2
file = "/k2"
[[node]]
name = "lb1"
)");
  ASSERT_EQ(lines(r).size(), 1u);
  EXPECT_NE(lines(r)[0].find("no active_key"), std::string::npos) << lines(r)[0];
}

TEST_F(ConfigLoaderTest, WarningsDoNotMakeAFileInvalid) {
  LoadResult r = load(std::string(kMinimal) + R"(
[[virtual_server]]
address = "198.51.100.99:80"
)");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.diagnostics.all().size(), 1u);
  EXPECT_EQ(r.diagnostics.all()[0].severity, Diagnostic::Severity::kWarning);
  EXPECT_EQ(r.diagnostics.all()[0].format(),
            "/etc/tandem/tandem.conf:9:11: warning: virtual server 198.51.100.99:80 is not on a "
            "VIP; it will not move with the active director (add a [[vip]] for 198.51.100.99 if "
            "it should)");
}

TEST_F(ConfigLoaderTest, FwmarkServicesTakeTheirFamilyFromTheConfig) {
  LoadResult r = load(std::string(kMinimal) + R"(
[[virtual_server]]
fwmark = 7
family = "ipv6"
forwarding = "dr"
persistence_timeout = "5m"
persistence_netmask = 64
[[virtual_server.real_server]]
address = "2001:db8::21"
)");
  ASSERT_TRUE(r.ok()) << r.diagnostics.formatAll();
  const VirtualServer& vs = r.config->virtual_servers.at(0);
  EXPECT_EQ(*vs.fwmark, 7u);
  EXPECT_EQ(vs.family(), Family::kInet6);
  EXPECT_EQ(vs.name, "fwmark:7");
  EXPECT_EQ(netmaskLength(*vs.persistence_netmask), 64);
  EXPECT_EQ(vs.real_servers.at(0).forwarding, Forwarding::kDr);
}

TEST_F(ConfigLoaderTest, TunnelForwardingMayCrossFamilies) {
  LoadResult r = load(std::string(kMinimal) + R"(
[[vip]]
address = "198.51.100.10/24"
interface = "eth0"
[[virtual_server]]
address = "198.51.100.10:80"
forwarding = "tun"
[[virtual_server.real_server]]
address = "[2001:db8::21]:80"
tunnel_type = "gue"
tunnel_port = 6080
)");
  ASSERT_TRUE(r.ok()) << r.diagnostics.formatAll();
  EXPECT_EQ(r.config->virtual_servers[0].real_servers[0].tunnel_type, TunnelType::kGue);
}

TEST_F(ConfigLoaderTest, OversizedAndBinaryInputIsRejectedWithAPlace) {
  std::string binary = std::string(kMinimal) + std::string("\0\x01\x02", 3);
  LoadResult r = load(binary);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics.all().at(0).line, 7);
  EXPECT_NE(r.diagnostics.all().at(0).message.find("binary data"), std::string::npos);
}

TEST_F(ConfigLoaderTest, SyntaxErrorsNameTheirPlace) {
  LoadResult r = load("[cluster]\nname = \"web\nx = 1\n");
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.diagnostics.all().size(), 1u) << "one defect, one error";
  const Diagnostic& d = r.diagnostics.all().at(0);
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 8) << "where the string opens, not where toml++ noticed it";
  EXPECT_EQ(d.message, "this string is never closed; end it with \" on the same line");
  // Another syntax error keeps toml++'s words, at its place.
  LoadResult other = load("[cluster]\nname = \"web\"\nx = = 1\n");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.diagnostics.all().at(0).line, 3);
  EXPECT_NE(other.diagnostics.all().at(0).message.find("TOML syntax error"), std::string::npos)
      << other.diagnostics.all().at(0).message;
}

// An array that never closes runs on into the next table, where toml++ fails: the error is
// where the array opens.
TEST_F(ConfigLoaderTest, AnUnclosedArrayIsReportedWhereItOpens) {
  LoadResult r = load(
      "[cluster]\nname = \"web\"\n[[node]]\nname = \"a\"\ninterfaces = [\"eth0\",\n\n"
      "[[vip]]\naddress = \"198.51.100.5/24\"\n");
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.diagnostics.all().size(), 1u);
  const Diagnostic& d = r.diagnostics.all().at(0);
  EXPECT_EQ(d.line, 5);
  EXPECT_EQ(d.column, 14);
  EXPECT_EQ(d.message, "this array is never closed; end it with ]");
}

constexpr const char* kRouted = R"(
[[virtual_server]]
address = "198.51.100.80:80"
[virtual_server.route]
min_healthy = 2
[[virtual_server.real_server]]
address = "203.0.113.11"
[[virtual_server.real_server]]
address = "203.0.113.12"
)";

TEST_F(ConfigLoaderTest, RoutesAreReadWithTheirDefaultsAndANodesMetric) {
  LoadResult r = load(std::string(kMinimal) + "route_metric = 50\n" + kRouted + R"(
[route]
mode = "active-active"
table = 100
hold_down = "30s"
)");
  ASSERT_TRUE(r.ok()) << r.diagnostics.formatAll();
  const Config& c = *r.config;
  EXPECT_EQ(c.routes.mode, RouteMode::kActiveActive);
  EXPECT_EQ(c.routes.table, 100u);
  EXPECT_EQ(c.routes.protocol, 201);
  EXPECT_EQ(c.routes.interface, "");
  EXPECT_FALSE(c.routes.own_interface);
  EXPECT_EQ(c.routes.metric, 0u);
  EXPECT_EQ(c.routes.hold_down, 30s);
  EXPECT_EQ(c.nodes[0].route_metric, std::optional<uint32_t>(50));
  ASSERT_TRUE(c.virtual_servers[0].route);
  EXPECT_EQ(c.virtual_servers[0].route->min_healthy, 2);
  EXPECT_EQ(said(r), "") << "a routed service is not expected on a VIP";
}

TEST_F(ConfigLoaderTest, RouteMistakesAreRefusedWithTheirPlace) {
  // Blackholes in the main table: the default table, no interface.
  LoadResult main = load(std::string(kMinimal) + kRouted);
  ASSERT_FALSE(main.ok());
  EXPECT_NE(said(main).find("\n10:1: the host routes would be blackholes (no [route] interface) "
                            "in the main table"),
            std::string::npos)
      << said(main);
  // More healthy servers asked for than there are.
  std::string three(kRouted);
  three.replace(three.find("min_healthy = 2"), 15, "min_healthy = 3");
  LoadResult many = load(std::string(kMinimal) + three + "[route]\ninterface = \"tandem0\"\n");
  ASSERT_FALSE(many.ok());
  EXPECT_NE(said(many).find("\n10:1: virtual server 198.51.100.80:80: min_healthy 3 but it has 2 "
                            "real servers: its route would never be held; lower min_healthy "
                            "or add real servers\n"),
            std::string::npos)
      << said(many);
  // The kernel's own tables and protocol numbers.
  LoadResult local = load(std::string(kMinimal) + kRouted + "[route]\ntable = 255\nprotocol = 4\n");
  ASSERT_FALSE(local.ok());
  EXPECT_NE(said(local).find("255 is the kernel's local table"), std::string::npos) << said(local);
  EXPECT_NE(said(local).find("route.protocol"), std::string::npos) << said(local);
  // Another daemon's protocol number.
  LoadResult frr = load(std::string(kMinimal) + kRouted + "[route]\ntable = 100\nprotocol = 190\n");
  ASSERT_FALSE(frr.ok());
  EXPECT_NE(said(frr).find("190 is FRR's: tandem would sweep that daemon's routes as orphans"),
            std::string::npos)
      << said(frr);
  // Two routed services on one address.
  LoadResult twice = load(std::string(kMinimal) + kRouted + R"(
[[virtual_server]]
name = "tls"
address = "198.51.100.80:443"
[virtual_server.route]
[[virtual_server.real_server]]
address = "203.0.113.11"
[route]
table = 100
)");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(said(twice).find("\n20:1: virtual server tls: its address 198.51.100.80 is routed "
                             "already by virtual server 198.51.100.80:80 ([virtual_server.route] "
                             "at line 10)"),
            std::string::npos)
      << said(twice);
  // An owned interface needs a name.
  LoadResult owned =
      load(std::string(kMinimal) + kRouted + "[route]\ntable = 100\nown_interface = true\n");
  ASSERT_FALSE(owned.ok());
  EXPECT_NE(said(owned).find("\n16:1: own_interface = true but [route] names no interface for "
                             "tandemd to create"),
            std::string::npos)
      << said(owned);
  LoadResult named = load(std::string(kMinimal) + kRouted +
                          "[route]\ninterface = \"rhi0\"\nown_interface = true\n");
  ASSERT_TRUE(named.ok()) << said(named);
  EXPECT_TRUE(named.config->routes.own_interface);
  // A firewall mark has no address to route.
  LoadResult mark = load(std::string(kMinimal) + R"(
[[virtual_server]]
fwmark = 7
[virtual_server.route]
[[virtual_server.real_server]]
address = "203.0.113.11:80"
[route]
interface = "tandem0"
)");
  ASSERT_FALSE(mark.ok());
  EXPECT_NE(said(mark).find("[virtual_server.route] on the firewall-mark service fwmark:7"),
            std::string::npos)
      << said(mark);
}

TEST_F(ConfigLoaderTest, EveryKeyTheLoaderReadsIsRecorded) {
  LoadResult r = load(kMinimal);
  EXPECT_TRUE(r.known_keys.count("cluster.heartbeat_interval"));
  EXPECT_TRUE(r.known_keys.count("node.priority"));
  EXPECT_FALSE(r.known_keys.count("cluster.nonsense"));
}

}  // namespace
}  // namespace tandem::config
