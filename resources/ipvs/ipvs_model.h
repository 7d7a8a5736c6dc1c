#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/ip_address.h"
#include "common/result.h"

// The IPVS table as tandem sees it: what the kernel holds (dumped) and what it should hold
// (config x health). Plain values, no kernel types: the codec (ipvs_codec) converts to and from
// the IPVS generic netlink family of <linux/ip_vs.h>, the planner (ipvs_plan) diffs two tables.
namespace tandem::resources::ipvs {

// How the kernel identifies a service: protocol + address + port, or fwmark + family.
struct ServiceKey {
  Family family = Family::kInet;
  uint16_t protocol = 0;  // IPPROTO_TCP / IPPROTO_UDP / IPPROTO_SCTP; 0 for fwmark services
  IpAddress address;      // unset (all zero) for fwmark services
  uint16_t port = 0;      // host order
  uint32_t fwmark = 0;    // 0: an address service

  auto operator<=>(const ServiceKey&) const = default;
  std::string toString()
      const;  // "tcp 198.51.100.10:80", "tcp [2001:db8::10]:80", "fwmark 7 (ipv4)"
};

// IP_VS_CONN_F_FWD_MASK values of <linux/ip_vs.h>
enum class Forward : uint32_t { kMasq = 0, kLocal = 1, kTunnel = 2, kDirectRoute = 3, kBypass = 4 };
// IP_VS_CONN_F_TUNNEL_TYPE_*
enum class Tunnel : uint8_t { kIpip = 0, kGue = 1, kGre = 2 };

// The one wording of the model's parts, for logs, `tandem ipvs show` and the owned-services
// file alike.
// "tcp", "udp", "sctp"; another protocol number as "proto N".
std::string protocolName(uint16_t protocol);
// The config's words: "nat", "dr", "tun", "local", "bypass".
std::string forwardName(Forward f);
// "ipip", "gue", "gre".
std::string tunnelName(Tunnel t);
// "198.51.100.10:80", "[2001:db8::10]:53" (common/ip_address.h).
using ::tandem::hostPort;

struct Service {
  ServiceKey key;
  std::string scheduler = "wlc";
  uint32_t flags = 0;      // IP_VS_SVC_F_* (persistent, hashed, onepacket, sched flags 1-3)
  uint32_t timeout_s = 0;  // persistence timeout in seconds (with IP_VS_SVC_F_PERSISTENT)
  uint32_t netmask = 0;    // IPv4: the mask as a host-order integer; IPv6: the prefix length
  std::string pe_name;     // persistence engine, e.g. "sip"; usually empty

  bool operator==(const Service&) const = default;
};

struct DestKey {
  IpAddress address;
  uint16_t port = 0;  // host order
  auto operator<=>(const DestKey&) const = default;
};

struct Destination {
  DestKey key;
  Family family = Family::kInet;  // may differ from the service's only with tunnel forwarding
  Forward forward = Forward::kMasq;
  int32_t weight = 1;
  uint32_t upper_threshold = 0;
  uint32_t lower_threshold = 0;
  Tunnel tunnel_type = Tunnel::kIpip;
  uint16_t tunnel_port = 0;   // host order; GUE only
  uint16_t tunnel_flags = 0;  // IP_VS_TUNNEL_ENCAP_FLAG_*

  bool operator==(const Destination&) const = default;
};

// Counters from a dump (IPVS_STATS_ATTR_* / IPVS_DEST_ATTR_*_CONNS); not compared by the planner.
struct Stats {
  uint64_t conns = 0, in_pkts = 0, out_pkts = 0, in_bytes = 0, out_bytes = 0;
  uint64_t cps = 0, in_pps = 0, out_pps = 0, in_bps = 0, out_bps = 0;
};

struct DestinationState {
  Destination dest;
  uint32_t active_conns = 0;
  uint32_t inactive_conns = 0;
  uint32_t persistent_conns = 0;
  Stats stats;
};

struct ServiceState {
  Service service;
  std::vector<DestinationState> destinations;
  Stats stats;
};

// A whole table: services in key order, each with its destinations in key order.
struct Table {
  std::vector<ServiceState> services;
};

// The kernel's global IPVS timeouts (IPVS_CMD_SET_CONFIG), in seconds; 0 leaves one unchanged.
struct Timeouts {
  uint32_t tcp = 0, tcpfin = 0, udp = 0;
  bool operator==(const Timeouts&) const = default;
};

// One change to the kernel table. The planner emits them in an order the kernel accepts
// (a service before its destinations, destinations before their service on delete).
struct Op {
  enum class Kind { kAddService, kEditService, kDelService, kAddDest, kEditDest, kDelDest };
  Kind kind = Kind::kAddService;
  Service service;                  // the whole service (for dest ops: the one it belongs to)
  std::optional<Destination> dest;  // set for dest ops
  bool operator==(const Op&) const = default;
  std::string toString() const;  // "add service tcp 198.51.100.10:80 rr", "edit dest ... weight 0"
};

// The kernel's IPVS table, behind the narrowest interface the reconciler needs. The netlink
// implementation (ipvs_netlink) talks generic netlink; tests use a fake. Errors keep the
// kernel's errno meaning in ErrorCode: kAlreadyExists for EEXIST, kNotFound for ENOENT/ESRCH,
// so the reconciler can re-dump and re-plan; kTimeout when the kernel stayed silent.
//
// Asynchronous: each call returns at once and its completion is called exactly once, from the
// loop. NetlinkKernel calls it when the reply arrives (or its deadline passes), never from
// inside the call; a fake may answer before returning, and callers cope with both. Requests are
// carried out in the order they were made, however many are in flight.
template <typename T>
using KernelDone = std::function<void(Result<T>)>;

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void dump(KernelDone<Table> done) = 0;
  virtual void apply(const Op& op, KernelDone<void> done) = 0;
  virtual void timeouts(KernelDone<Timeouts> done) = 0;
  virtual void setTimeouts(const Timeouts& t, KernelDone<void> done) = 0;
  // Requests that changed the kernel (apply, setTimeouts) since the start: "a no-op re-apply
  // performs zero netlink writes" is checked with this.
  virtual uint64_t writes() const = 0;
  // Requests made between cork() and the matching uncork() may go to the kernel together when
  // uncork() comes (NetlinkKernel: one datagram for many); their order and completions are as
  // without. Corks nest. A kernel that sends each at once needs neither.
  virtual void cork() {}
  virtual void uncork() {}
};

// One of the kernel's IPVS connection-sync daemons (IPVS_CMD_NEW_DAEMON / GET_DAEMON): the
// master multicasts the connection table's changes, the backup receives them into its own
// table. A director may run both at once (one of each state).
enum class SyncState { kMaster, kBackup };
// "master", "backup".
std::string syncStateName(SyncState s);

struct SyncDaemon {
  SyncState state = SyncState::kBackup;
  std::string interface;  // IPVS_DAEMON_ATTR_MCAST_IFN
  uint32_t sync_id = 0;   // IPVS_DAEMON_ATTR_SYNC_ID
  uint16_t max_len = 0;   // IPVS_DAEMON_ATTR_SYNC_MAXLEN: UDP payload size; 0: the kernel's
  IpAddress group;        // MCAST_GROUP or MCAST_GROUP6 by its family; unspecified
                          // (0.0.0.0): none sent, the kernel's default 224.0.0.81
  uint16_t port = 0;      // IPVS_DAEMON_ATTR_MCAST_PORT (host order); 0: the kernel's 8848
  uint8_t ttl = 0;        // IPVS_DAEMON_ATTR_MCAST_TTL; 0: the kernel's 1
  bool operator==(const SyncDaemon&) const = default;
};

// The sync daemons, behind the interface the sync subsystem needs; same completion rules as
// Kernel (from the loop, exactly once). NetlinkKernel implements it on its own socket; tests
// use a fake. start() of a state that already runs is kAlreadyExists (EEXIST); stop() of one
// that does not is kNotFound (ESRCH).
class SyncKernel {
 public:
  virtual ~SyncKernel() = default;
  // The daemons that run now (0, 1 or 2), as the kernel reports them.
  virtual void daemons(KernelDone<std::vector<SyncDaemon>> done) = 0;
  virtual void startDaemon(const SyncDaemon& d, KernelDone<void> done) = 0;
  virtual void stopDaemon(SyncState state, KernelDone<void> done) = 0;
};

}  // namespace tandem::resources::ipvs
