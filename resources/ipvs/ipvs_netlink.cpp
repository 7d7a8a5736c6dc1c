#include "ipvs/ipvs_netlink.h"

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace tandem::resources::ipvs {
namespace {

// Dump replies are sized to the receive buffer (at least a page); one service with its stats
// is about 320 bytes, one destination 356.
constexpr size_t kReceiveBuffer = 65536;
constexpr int kDumpAttempts = 3;

}  // namespace

Result<std::unique_ptr<NetlinkKernel>> NetlinkKernel::open(Millis timeout) {
  mnl_socket* nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (nl == nullptr) return fail(errnoError(errno, "cannot open a NETLINK_GENERIC socket"));
  if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
    int err = errno;
    mnl_socket_close(nl);
    return fail(errnoError(err, "cannot bind the NETLINK_GENERIC socket"));
  }
  // The kernel's own words in error acks, and acks that do not echo the whole request.
  int on = 1;
  (void)mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &on, sizeof(on));
  (void)mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &on, sizeof(on));
  std::unique_ptr<NetlinkKernel> k(new NetlinkKernel(nl, timeout));
  auto replies = k->transact(codec::encodeGetFamily(++k->seq_), "look up the IPVS netlink family");
  if (!replies) {
    if (replies.error().code == ErrorCode::kNotFound) {
      return fail(ErrorCode::kUnavailable,
                  "this kernel has no IPVS (generic netlink family \"IPVS\" not found); load "
                  "it with `modprobe ip_vs`");
    }
    return fail(replies.error());
  }
  for (const auto& m : *replies) {
    if (m.kind == codec::Message::Kind::kFamily) k->family_id_ = m.family_id;
  }
  if (k->family_id_ == 0) {
    return fail(ErrorCode::kParse, "the kernel answered the IPVS family lookup without an id");
  }
  return k;
}

NetlinkKernel::NetlinkKernel(mnl_socket* nl, Millis timeout)
    : nl_(nl), portid_(mnl_socket_get_portid(nl)), timeout_(timeout) {}

NetlinkKernel::~NetlinkKernel() { mnl_socket_close(nl_); }

Result<std::vector<codec::Message>> NetlinkKernel::transact(const std::vector<uint8_t>& request,
                                                            std::string_view what, const Op* op) {
  // The codec wrote seq_ into the request's header.
  const uint32_t seq = seq_;
  if (mnl_socket_sendto(nl_, request.data(), request.size()) < 0) {
    return fail(errnoError(errno, "cannot send to the kernel (" + std::string(what) + ")"));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  // One buffer for the socket's life: zeroing 64 KiB per request is a cost of its own under
  // emulation (the VM lab), paid 11,000 times by a first apply.
  if (rx_.empty()) rx_.resize(kReceiveBuffer / sizeof(uint64_t));
  std::vector<uint64_t>& buf = rx_;
  std::vector<codec::Message> out;
  for (;;) {
    auto left = std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) left = Millis(0);
    pollfd p{mnl_socket_get_fd(nl_), POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errnoError(errno, "poll on the NETLINK_GENERIC socket"));
    if (n == 0) {
      return fail(ErrorCode::kTimeout, "the kernel did not answer within " +
                                           std::to_string(timeout_.count()) + " ms (" +
                                           std::string(what) + ")");
    }
    ssize_t got = mnl_socket_recvfrom(nl_, buf.data(), kReceiveBuffer);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got < 0) {
      return fail(errnoError(errno, "cannot read from the kernel (" + std::string(what) + ")"));
    }
    auto msgs = codec::decode(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(buf.data()),
                                                       static_cast<size_t>(got)),
                              family_id_);
    if (!msgs) {
      return fail(ErrorCode::kParse,
                  "bad reply from the kernel (" + std::string(what) + "): " + msgs.error().message);
    }
    for (auto& m : *msgs) {
      // A late answer to an earlier request that timed out: not ours any more.
      if (m.seq != seq || (m.pid != 0 && m.pid != portid_)) continue;
      if ((m.kind == codec::Message::Kind::kAck || m.kind == codec::Message::Kind::kDone) &&
          m.error != 0) {
        return fail(op != nullptr ? codec::opError(*op, m.error, m.kernel_message)
                                  : codec::ackError(m.error, what, m.kernel_message));
      }
      const bool last =
          m.kind == codec::Message::Kind::kAck || m.kind == codec::Message::Kind::kDone;
      out.push_back(std::move(m));
      if (last) return out;
    }
  }
}

Result<std::vector<DestinationState>> NetlinkKernel::dumpDests(const ServiceKey& key) {
  const std::string what = "list the destinations of service " + key.toString();
  auto req = codec::encodeDumpDests(family_id_, key, ++seq_);
  if (!req) return fail(req.error().code, what + ": " + req.error().message);
  auto replies = transact(*req, what);
  if (!replies) return fail(replies.error());
  std::vector<DestinationState> out;
  for (auto& m : *replies) {
    if (m.dump_interrupted) return fail(ErrorCode::kTryAgain, what + ": the table changed");
    if (m.kind == codec::Message::Kind::kDest) out.push_back(std::move(m.dest));
  }
  std::sort(out.begin(), out.end(), [](const DestinationState& a, const DestinationState& b) {
    return a.dest.key < b.dest.key;
  });
  return out;
}

Result<Table> NetlinkKernel::dump() {
  const std::string what = "list the IPVS services";
  for (int attempt = 1;; ++attempt) {
    auto replies = transact(codec::encodeDumpServices(family_id_, ++seq_), what);
    if (!replies) return fail(replies.error());
    Table t;
    bool interrupted = false;
    for (auto& m : *replies) {
      interrupted = interrupted || m.dump_interrupted;
      if (m.kind == codec::Message::Kind::kService) t.services.push_back(std::move(m.service));
    }
    std::sort(
        t.services.begin(), t.services.end(),
        [](const ServiceState& a, const ServiceState& b) { return a.service.key < b.service.key; });
    for (auto& s : t.services) {
      if (interrupted) break;
      auto dests = dumpDests(s.service.key);
      if (!dests && dests.error().code == ErrorCode::kTryAgain) {
        interrupted = true;
        break;
      }
      // The service went away between the two dumps: the whole table is stale.
      if (!dests && dests.error().code == ErrorCode::kNotFound) {
        interrupted = true;
        break;
      }
      if (!dests) return fail(dests.error());
      s.destinations = std::move(*dests);
    }
    // The table changed under the dump: what it returned may be inconsistent. Ask again.
    if (!interrupted) return t;
    if (attempt == kDumpAttempts) {
      return fail(ErrorCode::kTryAgain, "cannot " + what + ": the table kept changing");
    }
  }
}

Result<void> NetlinkKernel::apply(const Op& op) {
  const std::string what = "cannot " + codec::describe(op);
  auto req = codec::encodeOp(family_id_, op, ++seq_);
  // The codec's error names the service or destination already.
  if (!req) return fail(req.error().code, "cannot change IPVS: " + req.error().message);
  auto replies = transact(*req, what, &op);
  if (!replies) return fail(replies.error());
  ++writes_;  // a write is a request that changed the kernel: a refused one did not
  return {};
}

Result<Timeouts> NetlinkKernel::timeouts() {
  auto replies = transact(codec::encodeGetConfig(family_id_, ++seq_), "read the IPVS timeouts");
  if (!replies) return fail(replies.error());
  for (const auto& m : *replies) {
    if (m.kind == codec::Message::Kind::kConfig) return m.timeouts;
  }
  return fail(ErrorCode::kParse, "the kernel answered without the IPVS timeouts");
}

Result<void> NetlinkKernel::setTimeouts(const Timeouts& t) {
  auto replies =
      transact(codec::encodeSetConfig(family_id_, t, ++seq_),
               "cannot set the IPVS timeouts (tcp " + std::to_string(t.tcp) + " s, tcpfin " +
                   std::to_string(t.tcpfin) + " s, udp " + std::to_string(t.udp) + " s)");
  if (!replies) return fail(replies.error());
  ++writes_;
  return {};
}

Result<void> NetlinkKernel::flush() {
  auto replies = transact(codec::encodeFlush(family_id_, ++seq_), "cannot flush the IPVS table");
  if (!replies) return fail(replies.error());
  ++writes_;
  return {};
}

}  // namespace tandem::resources::ipvs
