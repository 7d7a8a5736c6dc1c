#include "ping/icmp_echo.h"

namespace tandem::ping {

namespace {

constexpr uint8_t kProtocolIcmp = 1;

uint16_t getU16(ByteView b, size_t at) {
  return static_cast<uint16_t>((static_cast<uint16_t>(b[at]) << 8) | b[at + 1]);
}

}  // namespace

Bytes buildEchoRequest(Family family, const Echo& echo) {
  ByteWriter w;
  w.u8(family == Family::kInet ? kEchoRequestV4 : kEchoRequestV6);
  w.u8(0);   // code
  w.u16(0);  // checksum, below
  w.u16(echo.identifier);
  w.u16(echo.sequence);
  w.bytes(echo.payload);
  Bytes out = std::move(w).take();
  if (family == Family::kInet) {
    uint16_t sum = internetChecksum(out);
    out[2] = static_cast<uint8_t>(sum >> 8);
    out[3] = static_cast<uint8_t>(sum);
  }
  return out;
}

std::optional<Echo> parseEchoReply(Family family, ByteView icmp) {
  if (icmp.size() < kEchoHeaderSize) return std::nullopt;
  uint8_t want = family == Family::kInet ? kEchoReplyV4 : kEchoReplyV6;
  if (icmp[0] != want || icmp[1] != 0) return std::nullopt;
  if (family == Family::kInet && internetChecksum(icmp) != 0) return std::nullopt;
  Echo e;
  e.identifier = getU16(icmp, 4);
  e.sequence = getU16(icmp, 6);
  e.payload.assign(icmp.begin() + kEchoHeaderSize, icmp.end());
  return e;
}

std::optional<ByteView> icmpOfIpv4Packet(ByteView packet) {
  if (packet.size() < 20 || (packet[0] >> 4) != 4) return std::nullopt;
  size_t header = static_cast<size_t>(packet[0] & 0x0f) * 4;
  if (header < 20 || header > packet.size() || packet[9] != kProtocolIcmp) return std::nullopt;
  size_t total = getU16(packet, 2);
  // A raw socket gets the datagram as received; trust the shorter of the two lengths.
  size_t end = total >= header && total < packet.size() ? total : packet.size();
  return packet.subspan(header, end - header);
}

}  // namespace tandem::ping
