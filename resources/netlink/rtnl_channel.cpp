#include "netlink/rtnl_channel.h"

#include <linux/netlink.h>

#include <cerrno>
#include <string>

namespace tandem::resources::netlink {
namespace {

constexpr int kDumpAttempts = 3;

}  // namespace

Result<std::unique_ptr<RtnlChannel>> RtnlChannel::open(loop::Dispatcher& dispatcher) {
  auto socket = NetlinkSocket::open(dispatcher, NETLINK_ROUTE, "NETLINK_ROUTE");
  if (!socket) return fail(socket.error());
  return std::make_unique<RtnlChannel>(std::move(*socket));
}

RtnlChannel::RtnlChannel(std::unique_ptr<NetlinkSocket> socket) : socket_(std::move(socket)) {}

Result<std::vector<rtnl::Message>> RtnlChannel::transact(const std::vector<uint8_t>& request,
                                                         uint32_t seq, std::string_view what) {
  std::vector<rtnl::Message> out;
  const uint32_t portid = socket_->portId();
  auto done = socket_->exchangeNow(
      request, seq, std::string(what), [&](std::span<const uint8_t> datagram) -> Result<bool> {
        auto msgs = rtnl::decode(datagram);
        if (!msgs) {
          return fail(ErrorCode::kParse, "bad reply from the kernel (" + std::string(what) +
                                             "): " + msgs.error().message);
        }
        for (auto& m : *msgs) {
          if (m.seq != seq || (m.pid != 0 && m.pid != portid)) continue;
          const bool last = m.kind == rtnl::Message::Kind::kAck ||
                            m.kind == rtnl::Message::Kind::kDone || (m.flags & NLM_F_MULTI) == 0;
          out.push_back(std::move(m));
          if (last) return true;
        }
        return false;
      });
  if (!done) return fail(done.error());
  return out;
}

Result<void> RtnlChannel::acked(const std::vector<uint8_t>& request, uint32_t seq,
                                std::string_view what) {
  auto replies = transact(request, seq, what);
  if (!replies) return fail(replies.error());
  for (const auto& m : *replies) {
    if (m.kind != rtnl::Message::Kind::kAck) continue;
    if (m.error == 0) return {};
    return fail(rtnl::ackError(m.error, what, m.kernel_message));
  }
  return fail(ErrorCode::kParse, std::string(what) + ": the kernel answered without an ack");
}

Result<rtnl::LinkEntry> RtnlChannel::link(std::string_view name, uint32_t ifindex,
                                          std::string_view what) {
  const uint32_t seq = socket_->nextSeq();
  auto replies = transact(rtnl::encodeGetLink(name, ifindex, seq), seq, what);
  if (!replies) return fail(replies.error());
  for (const auto& m : *replies) {
    if (m.kind == rtnl::Message::Kind::kLink) return m.link;
    if (m.kind == rtnl::Message::Kind::kAck && m.error != 0) {
      Error e = rtnl::ackError(m.error, what, m.kernel_message);
      if (m.error == ENODEV) e.code = ErrorCode::kNotFound;
      return fail(std::move(e));
    }
  }
  return fail(ErrorCode::kParse, "the kernel answered without a link (" + std::string(what) + ")");
}

Result<std::vector<rtnl::Message>> RtnlChannel::dump(
    const std::function<std::vector<uint8_t>(uint32_t seq)>& encode, std::string_view what) {
  for (int attempt = 1;; ++attempt) {
    const uint32_t seq = socket_->nextSeq();
    auto replies = transact(encode(seq), seq, what);
    if (!replies) return fail(replies.error());
    bool interrupted = false;
    for (const auto& m : *replies) {
      interrupted = interrupted || m.dump_interrupted;
      if ((m.kind == rtnl::Message::Kind::kAck || m.kind == rtnl::Message::Kind::kDone) &&
          m.error != 0) {
        return fail(rtnl::ackError(m.error, "cannot " + std::string(what), m.kernel_message));
      }
    }
    // The table changed under the dump: what it returned may be inconsistent. Ask again.
    if (!interrupted) return replies;
    if (attempt == kDumpAttempts) {
      return fail(ErrorCode::kTryAgain,
                  "cannot " + std::string(what) + ": the table kept changing");
    }
  }
}

}  // namespace tandem::resources::netlink
