#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/duration.h"
#include "common/ip_address.h"

// The typed model of tandem.conf. conf/reference.md documents every key; the defaults written
// here are the documented ones, and config_loader.cpp is the only place that fills them from
// TOML.
namespace tandem::config {

enum class FailbackPolicy { kAuto, kManual, kDelayed };
// What a director does without quorum (votequorum says not quorate, or has not answered yet):
// kStop, it does not become or stay ACTIVE; kIgnore, it acts as though quorate (Pacemaker's
// no-quorum-policy=ignore: for a pair without corosync's votequorum, or a lab).
enum class NoQuorumPolicy { kStop, kIgnore };

// A command is either a shell line (run with /bin/sh -c) or an argv vector run directly.
struct Command {
  std::vector<std::string> argv;  // non-empty
  bool via_shell = false;         // argv is {line} and runs under /bin/sh -c
  bool operator==(const Command&) const = default;
};

struct AuthKey {
  uint32_t id = 1;
  std::string file;  // absolute, or resolved against the config file's directory
  // Or the name of a systemd credential (the unit's LoadCredential= or LoadCredentialEncrypted=):
  // read from $CREDENTIALS_DIRECTORY, so that the key need not lie on disk in clear.
  std::string credential;
  bool operator==(const AuthKey&) const = default;
};

struct Tiebreaker {
  std::vector<IpAddress> targets;  // empty: no tiebreaker
  // interval + timeout must stay under dead_time - heartbeat_interval (checked): a director cut
  // off from everything has to know it before it would take over from its silent peer.
  Millis interval{200};
  Millis timeout{300};
  bool operator==(const Tiebreaker&) const = default;
};

struct Fence {
  std::optional<Command> command;  // unset: no fencing
  Millis timeout{30000};
  bool operator==(const Fence&) const = default;
};

struct Cluster {
  std::string name;
  std::string group = "tandem";
  std::vector<AuthKey> keys;  // at least one after loading
  uint32_t active_key = 1;
  Millis heartbeat_interval{200};
  Millis dead_time{1000};
  uint16_t heartbeat_port = 5420;  // UDP, the fast path between the directors
  // The same frames over Corosync CPG, slower; at most dead_time / 2 (the loader checks it and
  // derives it from dead_time when it is not given), so CPG alone keeps a peer alive.
  Millis group_heartbeat_interval{500};
  FailbackPolicy failback = FailbackPolicy::kManual;
  Millis failback_delay{0};
  NoQuorumPolicy no_quorum_policy = NoQuorumPolicy::kStop;
  // How long the last quorum verdict stands once the votequorum connection is lost (corosync
  // restarting), before it counts as unknown; 0: unknown at once.
  Millis quorum_hold{8000};
  Tiebreaker tiebreaker;
  Fence fence;
  bool operator==(const Cluster&) const = default;
};

struct Node {
  std::string name;
  std::optional<IpAddress> address;  // for UDP heartbeats; unset: its ring0_addr in corosync
  int priority = 100;
  std::vector<std::string> interfaces;
  // The metric of the host routes this director holds ([route]): a site's preference, which a
  // routing daemon's filter turns into a MED, local-pref or community. Unset: [route] metric.
  std::optional<uint32_t> route_metric;
  bool operator==(const Node&) const = default;
};

struct Vip {
  IpPrefix address;
  std::string interface;
  std::string label;  // IPv4 only, empty: none
  int announce_count = 5;
  Millis announce_interval{200};
  Millis announce_second_burst{5000};  // 0: no second burst
  Millis announce_refresh{0};          // 0: no periodic refresh
  std::vector<IpAddress> verify_neighbors;
  bool operator==(const Vip&) const = default;
};

enum class Protocol { kTcp, kUdp, kSctp };
enum class Forwarding { kNat, kDr, kTun };
enum class TunnelType { kIpip, kGue, kGre };
enum class OnFailure { kQuiescent, kRemove };
enum class CheckType { kNone, kTcp, kHttp, kHttps, kUdp, kDns, kSmtp, kExec };
// A checked real server's state before its first results: up (it takes traffic until `fall`
// failures), down (one success puts it up), or down until it rises (`rise` successes).
enum class InitialHealth { kUp, kDown, kDownUntilRise };
enum class HttpMethod { kGet, kHead };

struct StatusRange {
  int low = 200;
  int high = 399;
  bool operator==(const StatusRange&) const = default;
};

// A health check. A real server's [check] table starts from its virtual server's and overrides
// the keys it names.
struct Check {
  CheckType type = CheckType::kNone;
  Millis interval{2000};
  Millis timeout{1000};
  int rise = 2;
  int fall = 3;
  InitialHealth initial = InitialHealth::kUp;
  uint16_t port = 0;  // 0: the real server's port
  // Where probes leave from (tcp, http, https, udp, dns, smtp); unset: the kernel's choice.
  std::optional<IpAddress> source_address;
  // tcp: close each probe with a reset (SO_LINGER 0), so it leaves no TIME_WAIT on the server
  bool tcp_reset = false;
  // http / https
  HttpMethod method = HttpMethod::kGet;
  std::string path = "/";
  std::string host;  // Host header; empty: the real server's address
  std::vector<StatusRange> expect_status{StatusRange{}};
  std::string expect_body;        // substring; empty: any body
  std::string expect_body_regex;  // POSIX extended regex the body must match; empty: any
  uint32_t max_response = 65536;  // body bytes read at most; a longer body fails the probe
  bool tls_verify = false;        // https: verify the real server's certificate
  std::string ca_file;            // https: the PEM bundle to verify against; empty: the system's
  // udp
  std::string payload;
  std::string expect_reply;  // substring; empty: any reply
  // Healthy when no ICMP port-unreachable comes back within the timeout, even without a reply
  // (a reply that comes must still hold expect_reply).
  bool accept_silence = false;
  // dns
  std::string query_name;
  std::string query_type = "A";
  std::string expect_rcode = "NOERROR";
  std::string expect_answer;  // text one answer record must contain; empty: any answer
  // smtp
  std::string helo = "tandem";
  // exec
  std::optional<Command> command;
  // The exit status sets the weight: 0 healthy at the configured weight, 1 unhealthy,
  // 2 to 255 healthy at weight status - 2 (keepalived's MISC_CHECK misc_dynamic).
  bool exit_weight = false;
  bool operator==(const Check&) const = default;
};

struct RealServer {
  Endpoint address;  // port 0: the virtual server's port
  int weight = 1;
  uint32_t upper_threshold = 0;  // 0: unlimited
  uint32_t lower_threshold = 0;
  Forwarding forwarding = Forwarding::kNat;  // resolved: the override or the service's
  TunnelType tunnel_type = TunnelType::kIpip;
  uint16_t tunnel_port = 0;
  bool tunnel_checksum = false;
  Check check;  // resolved: the service's check with this server's overrides
  bool operator==(const RealServer&) const = default;
};

// [virtual_server.route]: the service's address as a host route, held while the service is
// healthy (route health injection, [route]).
struct ServiceRoute {
  int min_healthy = 1;  // real servers up, at least, for the route to be held
  bool operator==(const ServiceRoute&) const = default;
};

struct VirtualServer {
  std::string name;
  std::optional<Endpoint> address;  // set for address:port services
  std::optional<uint32_t> fwmark;   // set for firewall-mark services
  Family fwmark_family = Family::kInet;
  Protocol protocol = Protocol::kTcp;
  std::string scheduler = "wlc";
  std::vector<std::string> scheduler_flags;
  Forwarding forwarding = Forwarding::kNat;
  Millis persistence_timeout{0};                 // 0: not persistent
  std::optional<IpAddress> persistence_netmask;  // IPv4 mask, or an IPv6 prefix as a mask
  bool one_packet = false;
  OnFailure on_failure = OnFailure::kQuiescent;
  std::optional<Endpoint> fallback;
  Millis slow_start{0};  // a recovered real server's weight ramps up over this; 0: at once
  // Run on real-server up/down and virtual-service up/down (every real server down, or back).
  std::optional<Command> notify;
  Millis notify_timeout{10000};
  Check check;
  std::vector<RealServer> real_servers;
  std::optional<ServiceRoute> route;  // unset: no host route for it

  Family family() const { return address ? address->address.family : fwmark_family; }
  bool operator==(const VirtualServer&) const = default;
};

struct Sync {
  bool enabled = false;
  std::string interface;
  int sync_id = 1;
  IpAddress multicast_group = *IpAddress::parse("224.0.0.81");
  uint16_t port = 8848;
  int ttl = 1;
  int max_message_length = 1472;
  // Sync-aware failback: a returning node takes the ACTIVE role back (failback auto or delayed)
  // only once it has run its backup daemon for sync_settle and its connection table holds
  // sync_min_share of the ACTIVE's; after sync_max_wait more it goes ahead anyway.
  Millis settle{10000};
  double min_share = 0.8;
  Millis max_wait{120000};
  bool operator==(const Sync&) const = default;
};

// [route]: how the services' host routes are held, for a routing daemon (BIRD's kernel
// protocol, FRR's redistribute) to pick up by their protocol number and announce.
enum class RouteMode {
  kActiveBackup,  // only the ACTIVE holds them: they follow the role, like a VIP
  kActiveActive,  // every healthy director holds them: routers spread traffic by ECMP
};
inline constexpr uint32_t kMainTable = 254;
struct Routes {
  RouteMode mode = RouteMode::kActiveBackup;
  uint32_t table = kMainTable;
  int protocol = 201;  // rtm_protocol; 5 to 255, not another routing daemon's (routeProtocolOwner)
  std::string interface;       // the routes go through it; empty: blackhole routes (table not main)
  bool own_interface = false;  // tandemd creates `interface` (a tun device that dies with it)
  uint32_t metric = 0;  // 0: none (the kernel's default); a [[node]]'s route_metric overrides
  Millis hold_down{0};  // a withdrawn service comes back after this long healthy; 0: at once
  bool operator==(const Routes&) const = default;
};

enum class IpvsManage { kOwned, kAll };

struct Ipvs {
  IpvsManage manage = IpvsManage::kOwned;
  Millis monitor_interval{5000};
  Millis tcp_timeout{0};  // 0: leave the kernel's value
  Millis tcpfin_timeout{0};
  Millis udp_timeout{0};
  bool set_sysctls = false;
  bool operator==(const Ipvs&) const = default;
};

struct Control {
  std::string group = "root";  // unix group allowed to change state through `tandem`
  std::string ipc_name = "tandem";
  bool operator==(const Control&) const = default;
};

// The OpenMetrics endpoint (conf/metrics.md): off unless asked for, and on localhost unless
// told otherwise, since it shows the cluster's layout to whoever can connect.
struct Metrics {
  bool enabled = false;
  Endpoint listen{*IpAddress::parse("127.0.0.1"), 9474};
  bool operator==(const Metrics&) const = default;
};

struct Daemon {
  std::string state_dir = "/var/lib/tandem";
  std::string log_level = "info";
  bool operator==(const Daemon&) const = default;
};

// [notify]: commands run on this director's role changes and VIP changes, one at a time, in
// the order of the events (keepalived's notify, notify_master, notify_backup, notify_fault).
struct Notify {
  std::optional<Command> role;    // every role change
  std::optional<Command> active;  // the role became ACTIVE
  std::optional<Command> backup;  // the role became BACKUP
  std::optional<Command> fault;   // the role became FAULT
  std::optional<Command> vip;     // a VIP was added to or removed from this director
  Millis timeout{10000};
  bool any() const { return role || active || backup || fault || vip; }
  bool operator==(const Notify&) const = default;
};

// A key file's path: as written when absolute (or empty), else against the directory of the
// config file `source` names; a credential's, in credentials_dir ("" when there is none). The
// loader checks it, the daemon reads it: one rule for both.
std::string keyPath(const std::string& source, const AuthKey& key,
                    const std::string& credentials_dir);
// Why name cannot be a systemd credential's (systemd's credential_name_valid: a file name, at
// most 255 bytes, not "." or ".."); nullopt for one it takes.
std::optional<std::string> credentialNameProblem(std::string_view name);

// A check type as the config names it: "none", "tcp", "http", ...
std::string checkTypeName(CheckType t);
// Why the kernel would refuse name as a network interface's (dev_valid_name: 1 to 15
// characters, not "." or "..", no /, : or white space); nullopt for a name it takes.
std::optional<std::string> interfaceNameProblem(std::string_view name);
// The routing daemon whose routes carry this protocol number (the kernel's rtnetlink.h, and FRR's
// zebra, which also sweeps its numbers' routes at start), or nullptr for a free number.
const char* routeProtocolOwner(int protocol);

struct Config {
  std::string source;  // the file it was read from
  Cluster cluster;
  std::vector<Node> nodes;
  std::vector<Vip> vips;
  std::vector<VirtualServer> virtual_servers;
  Sync sync;
  Ipvs ipvs;
  Control control;
  Metrics metrics;
  Daemon daemon;
  Notify notify;
  Routes routes;

  const Node* findNode(std::string_view name) const;
  // Where a key file is: as written when absolute, else beside the config file; a credential
  // in credentials_dir.
  std::string keyPath(const AuthKey& key, const std::string& credentials_dir) const {
    return config::keyPath(source, key, credentials_dir);
  }
};

}  // namespace tandem::config
