// Everything tandem reads from the kernel or the wire besides its own frames: rtnetlink replies
// (VIPs), IPVS generic netlink replies, ARP/NA answers to the neighbour probe, ICMP echo replies
// (the tiebreaker), and the netlink socket's routing of a datagram to its request. None of it is
// trusted: any bytes must give a parse error or a value, never a crash, a hang or a sanitizer
// report. The first byte picks the decoder.
#include <cstddef>
#include <cstdint>
#include <span>

#include "announce/frames.h"
#include "ipvs/ipvs_codec.h"
#include "netlink/netlink_socket.h"
#include "netlink/rtnl_codec.h"
#include "ping/icmp_echo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tandem;
  if (size == 0) return 0;
  std::span<const uint8_t> bytes(data + 1, size - 1);
  static const IpAddress kV4 = *IpAddress::parse("198.51.100.100");
  static const IpAddress kV6 = *IpAddress::parse("2001:db8::100");
  switch (data[0] % 7) {
    case 0:
      (void)resources::rtnl::decode(bytes);
      break;
    case 1:
      (void)resources::ipvs::codec::decode(bytes, 0x20);  // the family id seen in the VM
      break;
    case 2:
      (void)resources::ipvs::codec::decode(bytes, 0);  // before the family is resolved
      break;
    case 3:
      (void)resources::announce::parseNeighborReply(bytes, kV4);
      break;
    case 4:
      (void)resources::announce::parseNeighborReply(bytes, kV6);
      break;
    case 5:
      (void)ping::parseEchoReply(data[0] & 0x80 ? Family::kInet6 : Family::kInet, bytes);
      break;
    case 6:
      // What the netlink socket reads first from any datagram, to route it to its request.
      (void)resources::netlink::routeDatagram(bytes);
      break;
  }
  return 0;
}
