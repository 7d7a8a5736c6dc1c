#include "health/udp_checker.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <utility>
#include <vector>

#include "health/probe_socket.h"
#include "health/reasons.h"

namespace tandem::resources::health {

namespace {

// One datagram is read, into this much: every UDP payload fits (65507 bytes over IPv4, 65527
// over IPv6 without jumbograms).
constexpr size_t kMaxReply = 65536;

// An ICMP error the kernel reports on the connected socket, in the reason the probe gives.
std::string icmpReason(int err) {
  return err == ECONNREFUSED ? "port unreachable" : errnoReason(err);
}

}  // namespace

UdpChecker::UdpChecker(loop::Dispatcher& dispatcher) : run_(dispatcher, [this] { onTimeout(); }) {}

UdpChecker::~UdpChecker() = default;

void UdpChecker::probe(const ProbeTarget& target, ProbeDone done) {
  run_.begin(std::move(done));
  check_ = target.check;
  std::string reason;
  const int fd = openProbeSocket(target, SOCK_DGRAM, reason);
  if (fd < 0) return run_.soon(false, std::move(reason));
  if (!run_.watch(fd, loop::FdEvents{true, false}, [this](loop::FdEvents) { onReadable(); })) {
    return;
  }
  // Connected, so that only the real server's datagrams arrive and ICMP errors are reported.
  const SocketAddress sa = toSocketAddress(target.address.address, target.address.port);
  if (::connect(fd, sa.get(), sa.length) != 0) return run_.soon(false, errnoReason(errno));
  if (::send(fd, check_.payload.data(), check_.payload.size(), MSG_NOSIGNAL) < 0) {
    return run_.soon(false, "cannot send the payload: " + icmpReason(errno));
  }
  run_.armTimeout(check_.timeout);
}

void UdpChecker::cancel() { run_.cancel(); }

void UdpChecker::onReadable() {
  std::vector<char> buf(kMaxReply);
  // MSG_TRUNC: the datagram's whole length, even when it is longer than buf.
  const ssize_t n = ::recv(run_.fd(), buf.data(), buf.size(), MSG_TRUNC);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    return run_.finish(false, icmpReason(errno));
  }
  const size_t length = static_cast<size_t>(n);
  const std::string_view reply(buf.data(), std::min(length, buf.size()));
  const std::string cut =
      length > buf.size() ? " (cut to " + std::to_string(buf.size()) + " bytes)" : "";
  if (check_.expect_reply.empty()) {
    return run_.finish(true, "reply of " + std::to_string(length) + " bytes" + cut);
  }
  if (reply.find(check_.expect_reply) != std::string_view::npos) {
    return run_.finish(true, "reply contains " + quote(check_.expect_reply, kReasonQuoteMax));
  }
  run_.finish(false, "reply does not contain " + quote(check_.expect_reply, kReasonQuoteMax) +
                         ": got " + quote(reply, kReasonQuoteMax) + cut);
}

void UdpChecker::onTimeout() {
  // An ICMP error that came in just now, not yet seen by the watch, still counts.
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(run_.fd(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0) {
    return run_.finish(false, icmpReason(err));
  }
  if (check_.accept_silence) {
    return run_.finish(true, "no reply and no port unreachable within " +
                                 std::to_string(check_.timeout.count()) + " ms");
  }
  run_.finish(false, timedOutReason(check_.timeout));
}

}  // namespace tandem::resources::health
