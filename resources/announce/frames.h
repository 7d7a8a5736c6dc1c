#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/ip_address.h"

// The frames a director puts on the wire when a VIP moves to it, built by pure code so that
// golden tests pin every byte. The packet socket only carries them.
//
// Gratuitous ARP (request and reply form), 60 bytes with padding:
//
//   0      6      12   14                                        42      60
//   +------+------+----+-----------------------------------------+-------+
//   | dst  | src  |0806| htype=1 ptype=0800 hlen=6 plen=4 oper   | zeros |
//   | ff.. | mac  |    | sha=mac spa=vip tha tpa=vip             |       |
//   +------+------+----+-----------------------------------------+-------+
//   request: oper 1, tha 00:00:00:00:00:00; reply: oper 2, tha = mac (RFC 5944 4.6).
//
// Unsolicited neighbour advertisement, 86 bytes:
//
//   0      6      12   14                                54                       86
//   +------+------+----+---------------------------------+------------------------+
//   |33:33:| src  |86dd| IPv6: plen 32, next 58, hop 255 | ICMPv6 136, flags O,   |
//   |0:0:0:1 mac  |    | src=vip dst=ff02::1             | target=vip, opt 2 mac  |
//   +------+------+----+---------------------------------+------------------------+
//
// Probes ask a neighbour for its MAC from the VIP: an ARP request (sender = VIP), or a
// neighbour solicitation to the target's solicited-node group with the source link-layer
// option. parseNeighborReply reads the answer.
namespace tandem::resources::announce {

using Frame = std::vector<uint8_t>;
using FrameView = std::span<const uint8_t>;

struct MacAddress {
  std::array<uint8_t, 6> bytes{};

  // "02:00:5e:10:00:01" (any case); nullopt otherwise.
  static std::optional<MacAddress> parse(std::string_view text);
  std::string toString() const;  // lower case, colon separated
  bool isZero() const;
  auto operator<=>(const MacAddress&) const = default;
};

inline constexpr uint16_t kEtherTypeArp = 0x0806;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86dd;
inline constexpr size_t kMinEthernetFrame = 60;  // without the FCS

// vip must be IPv4 for the ARP builders and IPv6 for the ND builders (asserted: the config
// loader guarantees the family).
Frame buildGarpRequest(const MacAddress& mac, const IpAddress& vip);
Frame buildGarpReply(const MacAddress& mac, const IpAddress& vip);
// The NA's router flag: set when the interface forwards IPv6 (the kernel's own NAs do the same).
enum class NaRouter { kClear, kSet };
Frame buildUnsolicitedNa(const MacAddress& mac, const IpAddress& vip,
                         NaRouter router = NaRouter::kClear);

// One announcement of vip: both ARP forms for IPv4 (some neighbours heed only one), the NA for
// IPv6.
std::vector<Frame> announcementFrames(const MacAddress& mac, const IpAddress& vip,
                                      NaRouter router = NaRouter::kClear);

// A probe from vip (our mac) asking for neighbor's MAC; the families must match.
Frame buildArpProbe(const MacAddress& mac, const IpAddress& vip, const IpAddress& neighbor);
Frame buildNeighborSolicitation(const MacAddress& mac, const IpAddress& vip,
                                const IpAddress& neighbor);
Frame buildNeighborProbe(const MacAddress& mac, const IpAddress& vip, const IpAddress& neighbor);

// The ethertype a probe's answer arrives with, for the receiving socket.
uint16_t probeEtherType(Family family);

// If frame is neighbor's answer to a probe (an ARP reply with sender = neighbor, or a
// neighbour advertisement for target = neighbor with a valid checksum), the MAC it gives.
// Anything else, including truncated or malformed frames, is nullopt.
std::optional<MacAddress> parseNeighborReply(FrameView frame, const IpAddress& neighbor);

// The ICMPv6 checksum (RFC 4443 2.3) over the pseudo-header and icmp (checksum field zero or
// not: a message with a correct checksum sums to 0).
uint16_t icmpv6Checksum(const IpAddress& src, const IpAddress& dst, FrameView icmp);

}  // namespace tandem::resources::announce
