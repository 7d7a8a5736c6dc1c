#include "announce/frames.h"

#include <cassert>
#include <cstdio>

#include "common/byte_io.h"

namespace tandem::resources::announce {

namespace {

constexpr MacAddress kBroadcast{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
constexpr uint8_t kIcmpv6 = 58;
constexpr uint8_t kNdHopLimit = 255;
constexpr uint8_t kNeighborSolicitation = 135;
constexpr uint8_t kNeighborAdvertisement = 136;
constexpr uint8_t kOptSourceLinkAddr = 1;
constexpr uint8_t kOptTargetLinkAddr = 2;
constexpr uint32_t kNaFlagRouter = 0x80000000;
constexpr uint32_t kNaFlagOverride = 0x20000000;
constexpr uint16_t kArpRequest = 1;
constexpr uint16_t kArpReply = 2;
constexpr size_t kEthernetHeader = 14;
constexpr size_t kIpv6Header = 40;

void putMac(ByteWriter& w, const MacAddress& m) { w.bytes(m.bytes); }
void putIp(ByteWriter& w, const IpAddress& a) {
  w.bytes(ByteView(a.bytes).first(a.family == Family::kInet ? 4 : 16));
}

uint16_t readU16(FrameView f, size_t at) { return static_cast<uint16_t>((f[at] << 8) | f[at + 1]); }

void ethernet(ByteWriter& w, const MacAddress& dst, const MacAddress& src, uint16_t type) {
  putMac(w, dst);
  putMac(w, src);
  w.u16(type);
}

Frame arp(uint16_t oper, const MacAddress& mac, const IpAddress& sender, const MacAddress& tha,
          const IpAddress& target) {
  assert(sender.family == Family::kInet && target.family == Family::kInet);
  ByteWriter w;
  ethernet(w, kBroadcast, mac, kEtherTypeArp);
  w.u16(1);       // hardware: Ethernet
  w.u16(0x0800);  // protocol: IPv4
  w.u8(6);
  w.u8(4);
  w.u16(oper);
  putMac(w, mac);
  putIp(w, sender);
  putMac(w, tha);
  putIp(w, target);
  // Short frames are padded by most drivers but not by all (veth does not): pad here.
  w.padTo(kMinEthernetFrame);
  return std::move(w).take();
}

IpAddress v6(std::array<uint8_t, 16> b) { return IpAddress{Family::kInet6, b}; }

const IpAddress kAllNodes = v6({0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});

// Ethernet + IPv6 + an ND message whose body (after type, code, checksum) is body, followed by
// one link-layer address option.
Frame ndFrame(const MacAddress& eth_dst, const MacAddress& mac, const IpAddress& src,
              const IpAddress& dst, uint8_t type, uint32_t word, const IpAddress& target,
              uint8_t option) {
  assert(src.family == Family::kInet6 && dst.family == Family::kInet6 &&
         target.family == Family::kInet6);
  ByteWriter icmp;
  icmp.u8(type);
  icmp.u8(0);   // code
  icmp.u16(0);  // checksum, filled below
  icmp.u32(word);
  putIp(icmp, target);
  icmp.u8(option);
  icmp.u8(1);  // option length in units of 8 bytes
  putMac(icmp, mac);
  Frame body = std::move(icmp).take();
  const uint16_t sum = icmpv6Checksum(src, dst, body);
  body[2] = static_cast<uint8_t>(sum >> 8);
  body[3] = static_cast<uint8_t>(sum);

  ByteWriter w;
  ethernet(w, eth_dst, mac, kEtherTypeIpv6);
  w.u32(0x60000000);  // version 6, traffic class 0, flow label 0
  w.u16(static_cast<uint16_t>(body.size()));
  w.u8(kIcmpv6);
  w.u8(kNdHopLimit);  // RFC 4861: receivers drop ND with any other hop limit
  putIp(w, src);
  putIp(w, dst);
  w.bytes(body);
  return std::move(w).take();
}

bool sameIp(FrameView f, size_t at, const IpAddress& a) {
  const size_t n = a.family == Family::kInet ? 4 : 16;
  if (at + n > f.size()) return false;
  for (size_t i = 0; i < n; ++i) {
    if (f[at + i] != a.bytes[i]) return false;
  }
  return true;
}

MacAddress macAt(FrameView f, size_t at) {
  MacAddress m;
  for (size_t i = 0; i < 6; ++i) m.bytes[i] = f[at + i];
  return m;
}

IpAddress v6At(FrameView f, size_t at) {
  IpAddress a{Family::kInet6, {}};
  for (size_t i = 0; i < 16; ++i) a.bytes[i] = f[at + i];
  return a;
}

std::optional<MacAddress> parseArpReply(FrameView f, const IpAddress& neighbor) {
  constexpr size_t a = kEthernetHeader;
  if (f.size() < a + 28) return std::nullopt;
  if (readU16(f, a) != 1 || readU16(f, a + 2) != 0x0800 || f[a + 4] != 6 || f[a + 5] != 4) {
    return std::nullopt;
  }
  if (readU16(f, a + 6) != kArpReply || !sameIp(f, a + 14, neighbor)) return std::nullopt;
  MacAddress sha = macAt(f, a + 8);
  if (sha.isZero()) return std::nullopt;
  return sha;
}

std::optional<MacAddress> parseNa(FrameView f, const IpAddress& neighbor) {
  constexpr size_t ip = kEthernetHeader;
  constexpr size_t icmp = ip + kIpv6Header;
  if (f.size() < icmp + 24) return std::nullopt;
  if ((f[ip] >> 4) != 6 || f[ip + 6] != kIcmpv6 || f[ip + 7] != kNdHopLimit) return std::nullopt;
  const size_t plen = readU16(f, ip + 4);
  if (plen < 24 || icmp + plen > f.size()) return std::nullopt;
  FrameView body = f.subspan(icmp, plen);
  if (body[0] != kNeighborAdvertisement || body[1] != 0) return std::nullopt;
  if (!sameIp(body, 8, neighbor)) return std::nullopt;
  if (icmpv6Checksum(v6At(f, ip + 8), v6At(f, ip + 24), body) != 0) return std::nullopt;
  // The target link-layer option, if any, names the MAC; otherwise the frame's source does.
  for (size_t at = 24; at + 2 <= body.size();) {
    const size_t len = size_t{body[at + 1]} * 8;
    if (len == 0 || at + len > body.size()) return std::nullopt;
    if (body[at] == kOptTargetLinkAddr && len >= 8) return macAt(body, at + 2);
    at += len;
  }
  return macAt(f, 6);
}

}  // namespace

std::optional<MacAddress> MacAddress::parse(std::string_view text) {
  if (text.size() != 17) return std::nullopt;
  MacAddress m;
  for (size_t i = 0; i < 6; ++i) {
    if (i > 0 && text[i * 3 - 1] != ':') return std::nullopt;
    unsigned v = 0;
    for (size_t j = 0; j < 2; ++j) {
      const char c = text[i * 3 + j];
      unsigned d = 0;
      if (c >= '0' && c <= '9') {
        d = static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        d = static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        d = static_cast<unsigned>(c - 'A' + 10);
      } else {
        return std::nullopt;
      }
      v = v * 16 + d;
    }
    m.bytes[i] = static_cast<uint8_t>(v);
  }
  return m;
}

std::string MacAddress::toString() const {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", bytes[0], bytes[1], bytes[2],
                bytes[3], bytes[4], bytes[5]);
  return buf;
}

bool MacAddress::isZero() const {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

Frame buildGarpRequest(const MacAddress& mac, const IpAddress& vip) {
  return arp(kArpRequest, mac, vip, MacAddress{}, vip);
}

Frame buildGarpReply(const MacAddress& mac, const IpAddress& vip) {
  return arp(kArpReply, mac, vip, mac, vip);
}

Frame buildUnsolicitedNa(const MacAddress& mac, const IpAddress& vip, NaRouter router) {
  // Override set so that neighbours replace the old director's MAC; solicited clear, as
  // receivers drop solicited advertisements sent to a multicast group; router as the kernel
  // would answer for the interface (RFC 4861 7.2.5: a neighbour that sees it go from set to
  // clear drops the sender from its default routers, which breaks a gateway VIP).
  const uint32_t flags = kNaFlagOverride | (router == NaRouter::kSet ? kNaFlagRouter : 0);
  return ndFrame(MacAddress{{0x33, 0x33, 0, 0, 0, 1}}, mac, vip, kAllNodes, kNeighborAdvertisement,
                 flags, vip, kOptTargetLinkAddr);
}

std::vector<Frame> announcementFrames(const MacAddress& mac, const IpAddress& vip,
                                      NaRouter router) {
  if (vip.family == Family::kInet) return {buildGarpRequest(mac, vip), buildGarpReply(mac, vip)};
  return {buildUnsolicitedNa(mac, vip, router)};
}

Frame buildArpProbe(const MacAddress& mac, const IpAddress& vip, const IpAddress& neighbor) {
  return arp(kArpRequest, mac, vip, MacAddress{}, neighbor);
}

Frame buildNeighborSolicitation(const MacAddress& mac, const IpAddress& vip,
                                const IpAddress& neighbor) {
  // To the target's solicited-node group ff02::1:ffXX:XXXX (RFC 4291 2.7.1), whose Ethernet
  // address is 33:33 and the group's last four bytes (RFC 2464 7).
  IpAddress group = v6({0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, neighbor.bytes[13],
                        neighbor.bytes[14], neighbor.bytes[15]});
  MacAddress eth{{0x33, 0x33, 0xff, neighbor.bytes[13], neighbor.bytes[14], neighbor.bytes[15]}};
  return ndFrame(eth, mac, vip, group, kNeighborSolicitation, 0, neighbor, kOptSourceLinkAddr);
}

Frame buildNeighborProbe(const MacAddress& mac, const IpAddress& vip, const IpAddress& neighbor) {
  if (vip.family == Family::kInet) return buildArpProbe(mac, vip, neighbor);
  return buildNeighborSolicitation(mac, vip, neighbor);
}

uint16_t probeEtherType(Family family) {
  return family == Family::kInet ? kEtherTypeArp : kEtherTypeIpv6;
}

std::optional<MacAddress> parseNeighborReply(FrameView frame, const IpAddress& neighbor) {
  if (frame.size() < kEthernetHeader) return std::nullopt;
  const uint16_t type = readU16(frame, 12);
  if (type == kEtherTypeArp && neighbor.family == Family::kInet) {
    return parseArpReply(frame, neighbor);
  }
  if (type == kEtherTypeIpv6 && neighbor.family == Family::kInet6) return parseNa(frame, neighbor);
  return std::nullopt;
}

uint16_t icmpv6Checksum(const IpAddress& src, const IpAddress& dst, FrameView icmp) {
  // The pseudo-header (RFC 8200 8.1): source, destination, upper-layer length, next header.
  uint32_t sum = checksumAdd(0, ByteView(src.bytes));
  sum = checksumAdd(sum, ByteView(dst.bytes));
  const uint32_t len = static_cast<uint32_t>(icmp.size());
  sum += (len >> 16) + (len & 0xffff) + kIcmpv6;
  return checksumFinish(checksumAdd(sum, icmp));
}

}  // namespace tandem::resources::announce
