#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/byte_io.h"
#include "common/ip_address.h"

// ICMP and ICMPv6 echo messages as byte buffers. Pure: the socket shell (raw_echo_transport.h)
// only moves these bytes.
//
//   0       8      16              31
//   +-------+-------+---------------+
//   | type  | code  |   checksum    |   type: 8 / 0 (IPv4 request / reply),
//   +-------+-------+---------------+         128 / 129 (IPv6 request / reply); code 0
//   |  identifier   |   sequence    |
//   +---------------+---------------+
//   |  payload (echoed back as is)  |
//   +-------------------------------+
//
// The IPv4 checksum is the Internet checksum (RFC 1071) over the ICMP message. The ICMPv6 one
// also covers a pseudo-header with the source address, which only the kernel knows when it
// picks the route; a raw ICMPv6 socket always fills it in on send and verifies it on receive
// (RFC 3542 section 3.1), so the encoder leaves it 0 and the decoder does not check it.
namespace tandem::ping {

struct Echo {
  uint16_t identifier = 0;
  uint16_t sequence = 0;
  Bytes payload;
  bool operator==(const Echo&) const = default;
};

inline constexpr uint8_t kEchoRequestV4 = 8;
inline constexpr uint8_t kEchoReplyV4 = 0;
inline constexpr uint8_t kEchoRequestV6 = 128;
inline constexpr uint8_t kEchoReplyV6 = 129;
inline constexpr size_t kEchoHeaderSize = 8;

// The echo request for a target of this family.
Bytes buildEchoRequest(Family family, const Echo& echo);

// An echo reply of this family, or nullopt for anything else: another ICMP type (the raw socket
// sees every ICMP message to the host), a truncated message, or a bad IPv4 checksum.
std::optional<Echo> parseEchoReply(Family family, ByteView icmp);

// A raw IPv4 socket hands over the IP header too: the ICMP message behind it, or nullopt when
// the header is malformed or is not ICMP.
std::optional<ByteView> icmpOfIpv4Packet(ByteView packet);

}  // namespace tandem::ping
