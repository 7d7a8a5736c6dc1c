#include "vip/netlink_address_table.h"

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <poll.h>

#include <cerrno>
#include <chrono>

namespace tandem::resources {
namespace {

// One recv holds at least a page of dump replies; the kernel sizes dump skbs to the buffer.
constexpr size_t kReceiveBuffer = 32768;
constexpr int kDumpAttempts = 3;

std::string describe(const rtnl::AddressRequest& req) {
  return req.prefix.toString() + (req.interface.empty() ? "" : " on " + req.interface);
}

}  // namespace

Result<std::unique_ptr<NetlinkAddressTable>> NetlinkAddressTable::open(Millis timeout) {
  mnl_socket* nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (nl == nullptr) return fail(errnoError(errno, "cannot open a NETLINK_ROUTE socket"));
  if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
    int err = errno;
    mnl_socket_close(nl);
    return fail(errnoError(err, "cannot bind the NETLINK_ROUTE socket"));
  }
  // The kernel's own words in error acks, and acks that do not echo the whole request. Both
  // are refinements: an older kernel without them still answers.
  int on = 1;
  (void)mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &on, sizeof(on));
  (void)mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &on, sizeof(on));
  return std::unique_ptr<NetlinkAddressTable>(new NetlinkAddressTable(nl, timeout));
}

NetlinkAddressTable::NetlinkAddressTable(mnl_socket* nl, Millis timeout)
    : nl_(nl), portid_(mnl_socket_get_portid(nl)), seq_(0), timeout_(timeout) {}

NetlinkAddressTable::~NetlinkAddressTable() { mnl_socket_close(nl_); }

Result<std::vector<rtnl::Message>> NetlinkAddressTable::transact(
    const std::vector<uint8_t>& request, std::string_view what) {
  // The sequence number sits at bytes 8..11 of the header; the codec wrote seq_ there.
  const uint32_t seq = seq_;
  if (mnl_socket_sendto(nl_, request.data(), request.size()) < 0) {
    return fail(errnoError(errno, "cannot send to the kernel (" + std::string(what) + ")"));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  std::vector<uint32_t> buf(kReceiveBuffer / sizeof(uint32_t));
  std::vector<rtnl::Message> out;
  for (;;) {
    auto left = std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) left = Millis(0);
    pollfd p{mnl_socket_get_fd(nl_), POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errnoError(errno, "poll on the NETLINK_ROUTE socket"));
    if (n == 0) {
      return fail(ErrorCode::kTimeout, "the kernel did not answer within " +
                                           std::to_string(timeout_.count()) + " ms (" +
                                           std::string(what) + ")");
    }
    ssize_t got = mnl_socket_recvfrom(nl_, buf.data(), kReceiveBuffer);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got < 0)
      return fail(errnoError(errno, "cannot read from the kernel (" + std::string(what) + ")"));
    auto msgs = rtnl::decode(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(buf.data()),
                                                      static_cast<size_t>(got)));
    if (!msgs)
      return fail(ErrorCode::kParse,
                  "bad reply from the kernel (" + std::string(what) + "): " + msgs.error().message);
    for (auto& m : *msgs) {
      // A late answer to an earlier request that timed out: not ours any more.
      if (m.seq != seq || (m.pid != 0 && m.pid != portid_)) continue;
      const bool last = m.kind == rtnl::Message::Kind::kAck ||
                        m.kind == rtnl::Message::Kind::kDone || (m.flags & NLM_F_MULTI) == 0;
      out.push_back(std::move(m));
      if (last) return out;
    }
  }
}

Result<rtnl::LinkEntry> NetlinkAddressTable::getLink(std::string_view name, uint32_t ifindex,
                                                     std::string_view what) {
  ++counts_.link_queries;
  auto replies = transact(rtnl::encodeGetLink(name, ifindex, ++seq_), what);
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
    auto replies = transact(rtnl::encodeDumpAddresses(family, ++seq_), what);
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
  auto bytes = add ? rtnl::encodeNewAddress(req, ++seq_) : rtnl::encodeDeleteAddress(req, ++seq_);
  if (!bytes) return fail(bytes.error().code, what + ": " + bytes.error().message);
  if (add) {
    ++counts_.adds;
  } else {
    ++counts_.removes;
  }
  auto replies = transact(*bytes, what);
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
