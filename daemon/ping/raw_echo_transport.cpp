#include "ping/raw_echo_transport.h"

#include <linux/icmp.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ping/icmp_echo.h"

namespace tandem::ping {

namespace {

constexpr size_t kMaxPacket = 2048;

Error socketError(int err, Family family) {
  std::string what = "cannot open a raw " +
                     std::string(family == Family::kInet ? "ICMP" : "ICMPv6") +
                     " socket for [cluster.tiebreaker]";
  if (err == EPERM || err == EACCES) {
    what += " (tandemd needs CAP_NET_RAW: run it as root, or remove [cluster.tiebreaker])";
  } else if (err == EAFNOSUPPORT) {
    what += " (this kernel has no IPv6: use IPv4 targets)";
  }
  return errnoError(err, what);
}

}  // namespace

Result<std::unique_ptr<EchoTransport>> RawEchoTransport::open(loop::Dispatcher& dispatcher,
                                                              bool ipv4, bool ipv6,
                                                              OnIcmp on_icmp) {
  std::unique_ptr<RawEchoTransport> t(new RawEchoTransport(std::move(on_icmp)));
  RawEchoTransport* raw = t.get();
  if (ipv4) {
    t->fd4_ = ::socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP);
    if (t->fd4_ < 0) return fail(socketError(errno, Family::kInet));
    // Only echo replies reach the socket: the filter's set bits are the types dropped.
    icmp_filter filter{~(1u << ICMP_ECHOREPLY)};
    ::setsockopt(t->fd4_, SOL_RAW, ICMP_FILTER, &filter, sizeof filter);
    auto w = dispatcher.watchFd(t->fd4_, {true, false},
                                [raw](loop::FdEvents) { raw->readAll(Family::kInet); });
    if (!w) return fail(w.error());
    t->watch4_ = std::move(*w);
  }
  if (ipv6) {
    t->fd6_ = ::socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMPV6);
    if (t->fd6_ < 0) return fail(socketError(errno, Family::kInet6));
    icmp6_filter filter;
    ICMP6_FILTER_SETBLOCKALL(&filter);
    ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
    ::setsockopt(t->fd6_, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter);
    auto w = dispatcher.watchFd(t->fd6_, {true, false},
                                [raw](loop::FdEvents) { raw->readAll(Family::kInet6); });
    if (!w) return fail(w.error());
    t->watch6_ = std::move(*w);
  }
  return std::unique_ptr<EchoTransport>(std::move(t));
}

RawEchoTransport::~RawEchoTransport() {
  watch4_.reset();
  watch6_.reset();
  if (fd4_ >= 0) ::close(fd4_);
  if (fd6_ >= 0) ::close(fd6_);
}

Result<void> RawEchoTransport::send(const IpAddress& to, std::span<const uint8_t> icmp) {
  ssize_t n = -1;
  if (to.family == Family::kInet) {
    if (fd4_ < 0) return fail(ErrorCode::kInvalidArgument, "no IPv4 echo socket");
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    std::memcpy(&sa.sin_addr, to.bytes.data(), 4);
    n = ::sendto(fd4_, icmp.data(), icmp.size(), MSG_DONTWAIT,
                 reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
  } else {
    if (fd6_ < 0) return fail(ErrorCode::kInvalidArgument, "no IPv6 echo socket");
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    std::memcpy(&sa.sin6_addr, to.bytes.data(), 16);
    n = ::sendto(fd6_, icmp.data(), icmp.size(), MSG_DONTWAIT,
                 reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
  }
  if (n < 0) return fail(errnoError(errno, "echo request to " + to.toString()));
  return Result<void>();
}

void RawEchoTransport::readAll(Family family) {
  uint8_t buf[kMaxPacket];
  int fd = family == Family::kInet ? fd4_ : fd6_;
  // Bounded, so a flood of replies cannot keep the loop from its timers.
  for (int i = 0; i < 64; ++i) {
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    ssize_t n =
        ::recvfrom(fd, buf, sizeof buf, MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0) return;                                  // EAGAIN: drained
    if (static_cast<size_t>(n) > sizeof buf) continue;  // oversized: not one of ours
    std::span<const uint8_t> packet(buf, static_cast<size_t>(n));
    IpAddress src;
    src.family = family;
    if (family == Family::kInet && from.ss_family == AF_INET) {
      std::memcpy(src.bytes.data(), &reinterpret_cast<const sockaddr_in&>(from).sin_addr, 4);
      auto icmp = icmpOfIpv4Packet(packet);
      if (icmp) on_icmp_(src, *icmp);
    } else if (family == Family::kInet6 && from.ss_family == AF_INET6) {
      std::memcpy(src.bytes.data(), &reinterpret_cast<const sockaddr_in6&>(from).sin6_addr, 16);
      on_icmp_(src, packet);
    }
  }
}

}  // namespace tandem::ping
