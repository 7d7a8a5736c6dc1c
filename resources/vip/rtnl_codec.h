#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/ip_address.h"
#include "common/result.h"

// The rtnetlink messages tandem sends and reads to manage VIP addresses, as byte buffers. Pure:
// no socket, no clock; the socket shell (netlink_address_table.h) only moves these bytes.
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

// An address as the kernel reports it in an RTM_NEWADDR (a dump reply or a notification).
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
  enum class Kind { kAddress, kLink, kAck, kDone, kOther };
  Kind kind = Kind::kOther;
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t seq = 0;
  uint32_t pid = 0;
  AddressEntry address;           // kAddress
  LinkEntry link;                 // kLink
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
