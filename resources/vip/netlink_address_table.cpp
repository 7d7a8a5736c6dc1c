#include "vip/netlink_address_table.h"

#include <linux/netlink.h>

#include <cerrno>

namespace tandem::resources {
namespace {

constexpr int kDumpAttempts = 3;

std::string describe(const rtnl::AddressRequest& req) {
  return req.prefix.toString() + (req.interface.empty() ? "" : " on " + req.interface);
}

}  // namespace

Result<std::unique_ptr<NetlinkAddressTable>> NetlinkAddressTable::open(
    loop::Dispatcher& dispatcher) {
  auto socket = netlink::NetlinkSocket::open(dispatcher, NETLINK_ROUTE, "NETLINK_ROUTE");
  if (!socket) return fail(socket.error());
  return std::unique_ptr<NetlinkAddressTable>(new NetlinkAddressTable(std::move(*socket)));
}

NetlinkAddressTable::NetlinkAddressTable(std::unique_ptr<netlink::NetlinkSocket> socket)
    : socket_(std::move(socket)) {}

NetlinkAddressTable::~NetlinkAddressTable() = default;

Result<std::vector<rtnl::Message>> NetlinkAddressTable::transact(
    const std::vector<uint8_t>& request, uint32_t seq, std::string_view what) {
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

Result<rtnl::LinkEntry> NetlinkAddressTable::getLink(std::string_view name, uint32_t ifindex,
                                                     std::string_view what) {
  ++counts_.link_queries;
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

Result<uint32_t> NetlinkAddressTable::interfaceIndex(const std::string& name) {
  auto link = getLink(name, 0, "look up interface " + name);
  if (!link) {
    if (link.error().code == ErrorCode::kNotFound) {
      return fail(ErrorCode::kNotFound, "interface " + name + " does not exist");
    }
    return fail(link.error());
  }
  return link->ifindex;
}

Result<std::string> NetlinkAddressTable::interfaceName(uint32_t ifindex) {
  auto link = getLink("", ifindex, "look up interface index " + std::to_string(ifindex));
  if (!link) return fail(link.error());
  return link->name;
}

Result<std::vector<rtnl::AddressEntry>> NetlinkAddressTable::addresses(Family family) {
  const std::string what = "list " + std::string(familyName(family)) + " addresses";
  for (int attempt = 1;; ++attempt) {
    ++counts_.dumps;
    const uint32_t seq = socket_->nextSeq();
    auto replies = transact(rtnl::encodeDumpAddresses(family, seq), seq, what);
    if (!replies) return fail(replies.error());
    std::vector<rtnl::AddressEntry> out;
    bool interrupted = false;
    for (auto& m : *replies) {
      interrupted = interrupted || m.dump_interrupted;
      if ((m.kind == rtnl::Message::Kind::kAck || m.kind == rtnl::Message::Kind::kDone) &&
          m.error != 0) {
        return fail(rtnl::ackError(m.error, "cannot " + what, m.kernel_message));
      }
      if (m.kind == rtnl::Message::Kind::kAddress) out.push_back(std::move(m.address));
    }
    // The table changed under the dump: what it returned may be inconsistent. Ask again.
    if (!interrupted) return out;
    if (attempt == kDumpAttempts) {
      return fail(ErrorCode::kTryAgain, "cannot " + what + ": the table kept changing");
    }
  }
}

Result<void> NetlinkAddressTable::change(bool add, const rtnl::AddressRequest& req) {
  const std::string what = (add ? "cannot add " : "cannot remove ") + describe(req);
  const uint32_t seq = socket_->nextSeq();
  auto bytes = add ? rtnl::encodeNewAddress(req, seq) : rtnl::encodeDeleteAddress(req, seq);
  if (!bytes) return fail(bytes.error().code, what + ": " + bytes.error().message);
  if (add) {
    ++counts_.adds;
  } else {
    ++counts_.removes;
  }
  auto replies = transact(*bytes, seq, what);
  if (!replies) return fail(replies.error());
  for (const auto& m : *replies) {
    if (m.kind != rtnl::Message::Kind::kAck) continue;
    if (m.error == 0) return {};
    return fail(rtnl::ackError(m.error, what, m.kernel_message));
  }
  return fail(ErrorCode::kParse, what + ": the kernel answered without an ack");
}

Result<void> NetlinkAddressTable::add(const rtnl::AddressRequest& req) { return change(true, req); }

Result<void> NetlinkAddressTable::remove(const rtnl::AddressRequest& req) {
  return change(false, req);
}

}  // namespace tandem::resources
