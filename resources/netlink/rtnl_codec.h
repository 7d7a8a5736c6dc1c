#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/ip_address.h"
#include "common/result.h"

// The rtnetlink messages tandem sends and reads to manage VIP addresses and the host routes of
// route health injection, as byte buffers. Pure: no socket, no clock; the socket shells
// (vip/netlink_address_table.h, route/netlink_route_table.h) only move these bytes.
//
// Every request is one netlink message (pid 0: the kernel fills in the sender):
//
//   struct nlmsghdr   len u32 | type u16 | flags u16 | seq u32 | pid u32       16 bytes
//   struct ifaddrmsg  family u8 | prefixlen u8 | flags u8 | scope u8 | index u32 8 bytes
//   attributes        len u16 | type u16 | payload, padded to 4
//
//   RTM_NEWADDR  REQUEST|ACK|EXCL|CREATE  IFA_LOCAL, [IFA_LABEL,] IFA_ADDRESS   (ip addr add)
//   RTM_DELADDR  REQUEST|ACK              IFA_LOCAL, IFA_ADDRESS                (ip addr del)
//   RTM_GETADDR  REQUEST|DUMP             ifaddrmsg of one family, index 0: every address
//   RTM_GETLINK  REQUEST                  ifinfomsg, IFLA_EXT_MASK, [IFLA_IFNAME]
//
//   struct rtmsg      family u8 | dst_len u8 | src_len u8 | tos u8 |
//                     table u8 | protocol u8 | scope u8 | type u8 | flags u32           12 bytes
//
//   RTM_NEWROUTE REQUEST|ACK|EXCL|CREATE  RTA_DST, [RTA_TABLE,] [RTA_PRIORITY,] [RTA_OIF] (ip route
//   add) RTM_DELROUTE REQUEST|ACK              the same, scope NOWHERE, type UNSPEC       (ip route
//   del) RTM_GETROUTE REQUEST|DUMP             rtmsg of one family, RTA_TABLE             (ip route
//   show)
//
// The attribute order and flags are those of iproute2's `ip`, so the golden tests compare
// byte for byte with what `ip addr add` sends.
namespace tandem::resources::rtnl {

// One address to add or delete. IPv4 and IPv6 alike carry the address as both IFA_LOCAL and
// IFA_ADDRESS (no peer). label is IPv4 only; nodad is IPv6 only (IFA_F_NODAD: usable at once,
// no duplicate address detection delaying a takeover).
struct AddressRequest {
  IpPrefix prefix;
  uint32_t ifindex = 0;
  std::string interface;  // for the label check and for error messages
  std::string label;      // empty: none (the kernel then labels it with the interface name)
  bool nodad = false;
};

// A label must start with its interface's name and fit IFNAMSIZ (15 characters).
Result<void> validateLabel(std::string_view label, std::string_view interface);

Result<std::vector<uint8_t>> encodeNewAddress(const AddressRequest& req, uint32_t seq);
Result<std::vector<uint8_t>> encodeDeleteAddress(const AddressRequest& req, uint32_t seq);
std::vector<uint8_t> encodeDumpAddresses(Family family, uint32_t seq);
// RTM_GETLINK for one interface, by name (ifindex 0) or by index (empty name).
std::vector<uint8_t> encodeGetLink(std::string_view name, uint32_t ifindex, uint32_t seq);
// RTM_NEWLINK that sets IFF_UP on interface `ifindex` and changes nothing else (`ip link set
// up`), acked.
std::vector<uint8_t> encodeSetLinkUp(uint32_t ifindex, uint32_t seq);

// One host route to add or delete: in `table` (a table below 256 goes in rtmsg, a larger one
// in RTA_TABLE, as `ip` does), with `protocol` as its origin (what a routing daemon's filter
// matches), `metric` as its priority (0: none given), through interface `ifindex`, or, with
// ifindex 0, a blackhole (for a table no rule looks up, where the route is only a signal).
struct RouteRequest {
  IpPrefix prefix;
  uint32_t table = 254;  // RT_TABLE_MAIN
  uint8_t protocol = 0;
  uint32_t metric = 0;
  uint32_t ifindex = 0;
};

Result<std::vector<uint8_t>> encodeNewRoute(const RouteRequest& req, uint32_t seq);
Result<std::vector<uint8_t>> encodeDeleteRoute(const RouteRequest& req, uint32_t seq);
// The routes of one family in `table` with `protocol`, as `ip route show table T proto P` asks
// for them. The kernel filters by both only on a socket that asked for strict checking (and
// then answers ENOENT for a table that does not exist yet); the reader filters again in any
// case.
std::vector<uint8_t> encodeDumpRoutes(Family family, uint32_t table, uint8_t protocol,
                                      uint32_t seq);

// A route as the kernel reports it in an RTM_NEWROUTE or RTM_DELROUTE.
struct RouteEntry {
  IpPrefix prefix;       // RTA_DST and dst_len; the family's zero address without RTA_DST
  uint32_t table = 0;    // RTA_TABLE when present, else rtmsg's
  uint8_t protocol = 0;  // RTPROT_*
  uint8_t type = 0;      // RTN_*
  uint32_t metric = 0;   // RTA_PRIORITY, 0 without it
  uint32_t ifindex = 0;  // RTA_OIF, 0 without it
};

// An address as the kernel reports it in an RTM_NEWADDR (a dump reply or a notification) or an
// RTM_DELADDR (the notification of its removal; Message::type says which).
struct AddressEntry {
  uint32_t ifindex = 0;
  IpPrefix prefix;     // IFA_LOCAL when present (the local end), else IFA_ADDRESS
  std::string label;   // IPv4 only
  uint32_t flags = 0;  // IFA_FLAGS when present, else ifaddrmsg.ifa_flags (IFA_F_*)
  uint8_t scope = 0;
};

struct LinkEntry {
  uint32_t ifindex = 0;
  std::string name;
};

struct Message {
  enum class Kind { kAddress, kLink, kRoute, kAck, kDone, kOther };
  Kind kind = Kind::kOther;
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t seq = 0;
  uint32_t pid = 0;
  AddressEntry address;           // kAddress (type says RTM_NEWADDR or RTM_DELADDR)
  LinkEntry link;                 // kLink
  RouteEntry route;               // kRoute (type says RTM_NEWROUTE or RTM_DELROUTE)
  int error = 0;                  // kAck: a positive errno, 0 for success
  std::string kernel_message;     // kAck: the extended ack's text, if the kernel gave one
  bool dump_interrupted = false;  // NLM_F_DUMP_INTR: the table changed during the dump
};

// Splits one received buffer into its messages. A truncated or malformed message is a kParse
// error (the buffer is not trusted to be well-formed).
Result<std::vector<Message>> decode(std::span<const uint8_t> bytes);

// The error for a failed request: errno mapped into ErrorCode, the message naming what was
// being done ("cannot add 198.51.100.50/24 to eth0"), the kernel's reason and its own words.
Error ackError(int err, std::string_view what, std::string_view kernel_message);

}  // namespace tandem::resources::rtnl
