#include "announce/linux_packet_socket.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netpacket/packet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tandem::resources::announce {

namespace {

// Ethernet jumbo frames fit; a longer frame is truncated and then rejected by the parser.
constexpr size_t kMaxFrame = 9216;

class LinuxPacketSocket final : public PacketSocket {
 public:
  LinuxPacketSocket(int fd, MacAddress mac, std::string interface)
      : fd_(fd), mac_(mac), interface_(std::move(interface)) {}
  ~LinuxPacketSocket() override { ::close(fd_); }
  LinuxPacketSocket(const LinuxPacketSocket&) = delete;
  LinuxPacketSocket& operator=(const LinuxPacketSocket&) = delete;

  const MacAddress& mac() const override { return mac_; }
  int fd() const override { return fd_; }

  Result<void> send(FrameView frame) override {
    const ssize_t n = ::send(fd_, frame.data(), frame.size(), MSG_DONTWAIT);
    if (n < 0) return fail(errnoError(errno, "send on " + interface_));
    if (static_cast<size_t>(n) != frame.size()) {
      return fail(ErrorCode::kIo, "short send on " + interface_);
    }
    return {};
  }

  Result<std::optional<Frame>> receive() override {
    Frame buf(kMaxFrame);
    for (;;) {
      sockaddr_ll from{};
      socklen_t from_len = sizeof from;
      const ssize_t n = ::recvfrom(fd_, buf.data(), buf.size(), MSG_DONTWAIT,
                                   reinterpret_cast<sockaddr*>(&from), &from_len);
      // A packet socket also sees this host's own frames (our probes among them): skip those.
      if (n >= 0 && from.sll_pkttype == PACKET_OUTGOING) continue;
      if (n >= 0) {
        buf.resize(static_cast<size_t>(n));
        return std::optional<Frame>(std::move(buf));
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return std::optional<Frame>();
      return fail(errnoError(errno, "receive on " + interface_));
    }
  }

 private:
  int fd_;
  MacAddress mac_;
  std::string interface_;
};

}  // namespace

Result<std::unique_ptr<PacketSocket>> LinuxPacketSocketOpener::open(const std::string& interface,
                                                                    uint16_t receive_ethertype) {
  if (interface.empty() || interface.size() >= IFNAMSIZ) {
    return fail(ErrorCode::kInvalidArgument, "\"" + interface + "\" is not an interface name");
  }
  const unsigned ifindex = ::if_nametoindex(interface.c_str());
  if (ifindex == 0) {
    return fail(ErrorCode::kNotFound,
                "interface " + interface + " does not exist; cannot announce on it");
  }
  // Protocol 0: the socket receives nothing until bound with a protocol, so a send-only socket
  // never queues the segment's traffic.
  const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    Error e = errnoError(errno, "packet socket for " + interface);
    if (errno == EPERM) e.message += " (needs CAP_NET_RAW)";
    return fail(std::move(e));
  }
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, interface.c_str(), interface.size());
  if (::ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) {
    const int err = errno;
    ::close(fd);
    return fail(errnoError(err, "read the MAC of " + interface));
  }
  if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
    ::close(fd);
    return fail(ErrorCode::kInvalidArgument,
                "interface " + interface + " is not Ethernet (ARP hardware type " +
                    std::to_string(ifr.ifr_hwaddr.sa_family) +
                    "); gratuitous ARP and neighbour advertisements need an Ethernet interface");
  }
  MacAddress mac;
  std::memcpy(mac.bytes.data(), ifr.ifr_hwaddr.sa_data, mac.bytes.size());

  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_ifindex = static_cast<int>(ifindex);
  sll.sll_protocol = htons(receive_ethertype);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&sll), sizeof sll) != 0) {
    const int err = errno;
    ::close(fd);
    return fail(errnoError(err, "bind a packet socket to " + interface));
  }
  return std::unique_ptr<PacketSocket>(std::make_unique<LinuxPacketSocket>(fd, mac, interface));
}

}  // namespace tandem::resources::announce
