#include "cluster/udp_link.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tandem::cluster {

namespace {

constexpr size_t kMaxFrame = 2048;

sockaddr_in6 toSockaddr(const Endpoint& e) {
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons(e.port);
  if (e.address.family == Family::kInet) {
    // IPv4-mapped, so one dual-stack socket reaches both families.
    sa.sin6_addr.s6_addr[10] = 0xff;
    sa.sin6_addr.s6_addr[11] = 0xff;
    std::memcpy(&sa.sin6_addr.s6_addr[12], e.address.bytes.data(), 4);
  } else {
    std::memcpy(sa.sin6_addr.s6_addr, e.address.bytes.data(), 16);
  }
  return sa;
}

IpAddress fromSockaddr(const sockaddr_in6& sa) {
  IpAddress a;
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(sa.sin6_addr.s6_addr, kMapped, 12) == 0) {
    a.family = Family::kInet;
    std::memcpy(a.bytes.data(), &sa.sin6_addr.s6_addr[12], 4);
  } else {
    a.family = Family::kInet6;
    std::memcpy(a.bytes.data(), sa.sin6_addr.s6_addr, 16);
  }
  return a;
}

}  // namespace

Result<std::unique_ptr<UdpLink>> UdpLink::open(loop::Dispatcher& dispatcher, uint16_t port,
                                               OnFrame on_frame) {
  int fd = ::socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errnoError(errno, "heartbeat socket"));
  int off = 0;
  ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  // Heartbeats are network control traffic: let them jump queues on a busy director.
  int prio = 6;
  ::setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &prio, sizeof prio);
  int tos = 0xc0;  // CS6
  ::setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
  ::setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos);
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_addr = in6addr_any;
  sa.sin6_port = htons(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    int err = errno;
    ::close(fd);
    return fail(errnoError(err, "cannot bind the heartbeat port " + std::to_string(port) +
                                    " (is another tandemd running in this namespace?)"));
  }
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  std::unique_ptr<UdpLink> link(new UdpLink(fd, ntohs(sa.sin6_port), std::move(on_frame)));
  auto watch =
      dispatcher.watchFd(fd, {true, false}, [l = link.get()](loop::FdEvents) { l->readAll(); });
  if (!watch) return fail(watch.error());
  link->watch_ = std::move(*watch);
  return link;
}

UdpLink::~UdpLink() {
  watch_.reset();
  ::close(fd_);
}

void UdpLink::send(std::span<const uint8_t> frame) {
  for (const Endpoint& peer : peers_) {
    sockaddr_in6 sa = toSockaddr(peer);
    if (::sendto(fd_, frame.data(), frame.size(), MSG_DONTWAIT,
                 reinterpret_cast<const sockaddr*>(&sa), sizeof sa) < 0) {
      ++send_errors_;
    }
  }
}

void UdpLink::readAll() {
  uint8_t buf[kMaxFrame];
  // Bounded, so a flood cannot keep the loop from its timers.
  for (int i = 0; i < 64; ++i) {
    sockaddr_in6 from{};
    socklen_t len = sizeof from;
    ssize_t n =
        ::recvfrom(fd_, buf, sizeof buf, MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0) return;                                  // EAGAIN: drained
    if (static_cast<size_t>(n) > sizeof buf) continue;  // oversized: not one of ours
    on_frame_(std::span<const uint8_t>(buf, static_cast<size_t>(n)), fromSockaddr(from));
  }
}

}  // namespace tandem::cluster
