#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/socket_address.h"
#include "sync/sync_tap.h"

namespace tandem::resources::sync {

namespace {

constexpr uint8_t kDefaultGroup[4] = {224, 0, 0, 81};
constexpr uint16_t kDefaultPort = 8848;
// Datagrams read per wake: the rest waits for the next turn of the loop (level-triggered).
constexpr int kReadsPerWake = 64;
constexpr size_t kMaxDatagram = 65536;

class LinuxSyncTap final : public SyncTap {
 public:
  LinuxSyncTap(int fd, OnSyncDatagram on_datagram)
      : fd_(fd), on_datagram_(std::move(on_datagram)), buffer_(kMaxDatagram) {}
  ~LinuxSyncTap() override {
    watch_.reset();  // before the fd closes
    ::close(fd_);
  }
  LinuxSyncTap(const LinuxSyncTap&) = delete;
  LinuxSyncTap& operator=(const LinuxSyncTap&) = delete;

  Result<void> watch(loop::Dispatcher& dispatcher) {
    auto w = dispatcher.watchFd(fd_, loop::FdEvents{true, false},
                                [this](loop::FdEvents) { onReadable(); });
    if (!w) return fail(w.error());
    watch_ = std::move(*w);
    return {};
  }

 private:
  void onReadable() {
    std::weak_ptr<bool> alive = alive_;
    for (int i = 0; i < kReadsPerWake; ++i) {
      sockaddr_storage from{};
      socklen_t from_len = sizeof from;
      const ssize_t got = ::recvfrom(fd_, buffer_.data(), buffer_.size(), MSG_TRUNC,
                                     reinterpret_cast<sockaddr*>(&from), &from_len);
      if (got < 0) return;  // EAGAIN; any other error shows again on the next read
      const IpAddress sender = fromSocketAddress(from);
      // MSG_TRUNC returns the datagram's real length: one longer than the buffer is reported
      // at that length, and the parser finds it malformed.
      const size_t n = std::min(static_cast<size_t>(got), buffer_.size());
      on_datagram_(std::span<const uint8_t>(buffer_.data(), n), sender);
      if (alive.expired()) return;
    }
  }

  int fd_;
  OnSyncDatagram on_datagram_;
  std::vector<uint8_t> buffer_;
  std::unique_ptr<loop::FdWatch> watch_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

Error tapError(int err, const std::string& what, const ipvs::SyncDaemon& d) {
  return errnoError(err, "cannot listen beside the sync backup daemon on " + d.interface + " (" +
                             ipvs::hostPort(syncGroupOf(d), syncPortOf(d)) + "): " + what);
}

}  // namespace

IpAddress syncGroupOf(const ipvs::SyncDaemon& d) {
  if (!d.group.isUnspecified()) return d.group;
  IpAddress g;
  std::memcpy(g.bytes.data(), kDefaultGroup, 4);
  return g;
}

uint16_t syncPortOf(const ipvs::SyncDaemon& d) { return d.port != 0 ? d.port : kDefaultPort; }

Result<std::unique_ptr<SyncTap>> openLinuxSyncTap(loop::Dispatcher& dispatcher,
                                                  const ipvs::SyncDaemon& backup,
                                                  OnSyncDatagram on_datagram) {
  const IpAddress group = syncGroupOf(backup);
  const uint16_t port = syncPortOf(backup);
  const unsigned ifindex = ::if_nametoindex(backup.interface.c_str());
  if (ifindex == 0) return fail(tapError(errno, "no such interface", backup));
  const bool v6 = group.family == Family::kInet6;
  const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(tapError(errno, "socket", backup));
  auto closeWith = [&](int err, const std::string& what) -> Result<std::unique_ptr<SyncTap>> {
    ::close(fd);
    return fail(tapError(err, what, backup));
  };
  int one = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) {
    return closeWith(errno, "SO_REUSEADDR");
  }
  // Only the daemon's interface, as the kernel's own socket (sk_bound_dev_if).
  if (::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, backup.interface.c_str(),
                   static_cast<socklen_t>(backup.interface.size())) != 0) {
    return closeWith(errno, "SO_BINDTODEVICE");
  }
  SocketAddress sa = toSocketAddress(group, port);
  // A link-local group (ff02::/16) is only a group on one interface.
  if (v6) reinterpret_cast<sockaddr_in6*>(sa.get())->sin6_scope_id = ifindex;
  if (::bind(fd, sa.get(), sa.length) != 0) return closeWith(errno, "bind");
  if (v6) {
    ipv6_mreq mreq{};
    std::memcpy(&mreq.ipv6mr_multiaddr, group.bytes.data(), 16);
    mreq.ipv6mr_interface = ifindex;
    if (::setsockopt(fd, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &mreq, sizeof mreq) != 0) {
      return closeWith(errno, "IPV6_ADD_MEMBERSHIP");
    }
  } else {
    ip_mreqn mreq{};
    std::memcpy(&mreq.imr_multiaddr, group.bytes.data(), 4);
    mreq.imr_ifindex = static_cast<int>(ifindex);
    if (::setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof mreq) != 0) {
      return closeWith(errno, "IP_ADD_MEMBERSHIP");
    }
  }
  auto tap = std::make_unique<LinuxSyncTap>(fd, std::move(on_datagram));
  if (auto w = tap->watch(dispatcher); !w) return fail(w.error());
  return std::unique_ptr<SyncTap>(std::move(tap));
}

}  // namespace tandem::resources::sync
