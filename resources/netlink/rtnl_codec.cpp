#include "netlink/rtnl_codec.h"

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "netlink/netlink_message.h"

namespace tandem::resources::rtnl {
namespace {

uint8_t afOf(Family f) { return f == Family::kInet ? AF_INET : AF_INET6; }
size_t addressLength(Family f) { return f == Family::kInet ? 4 : 16; }

using Builder = netlink::RequestBuilder;

Result<std::vector<uint8_t>> encodeAddress(uint16_t type, uint16_t flags, const AddressRequest& req,
                                           uint32_t seq, bool with_label) {
  const Family fam = req.prefix.address.family;
  if (req.prefix.length < 0 || req.prefix.length > req.prefix.address.maxPrefix()) {
    return fail(ErrorCode::kInvalidArgument, "prefix length " + std::to_string(req.prefix.length) +
                                                 " is out of range for " + req.prefix.toString());
  }
  if (req.ifindex == 0) {
    return fail(ErrorCode::kInvalidArgument, "no interface index for " + req.prefix.toString());
  }
  if (with_label && !req.label.empty()) {
    if (fam != Family::kInet) {
      return fail(ErrorCode::kInvalidArgument, "label \"" + req.label + "\" on " +
                                                   req.prefix.toString() +
                                                   ": labels are for IPv4 addresses only");
    }
    if (auto r = validateLabel(req.label, req.interface); !r) return fail(r.error());
  }
  Builder b(type, flags, seq);
  auto* ifa = b.extra<ifaddrmsg>();
  ifa->ifa_family = afOf(fam);
  ifa->ifa_prefixlen = static_cast<uint8_t>(req.prefix.length);
  ifa->ifa_flags = (with_label && fam == Family::kInet6 && req.nodad) ? IFA_F_NODAD : 0;
  ifa->ifa_scope = RT_SCOPE_UNIVERSE;
  ifa->ifa_index = req.ifindex;
  const size_t len = addressLength(fam);
  mnl_attr_put(b.nlh(), IFA_LOCAL, len, req.prefix.address.bytes.data());
  if (with_label && !req.label.empty()) mnl_attr_put_strz(b.nlh(), IFA_LABEL, req.label.c_str());
  mnl_attr_put(b.nlh(), IFA_ADDRESS, len, req.prefix.address.bytes.data());
  return b.bytes();
}

std::optional<IpAddress> addressOf(Family fam, const nlattr* a) {
  const size_t want = addressLength(fam);
  if (mnl_attr_get_payload_len(a) != want) return std::nullopt;
  IpAddress ip;
  ip.family = fam;
  std::memcpy(ip.bytes.data(), mnl_attr_get_payload(a), want);
  return ip;
}

// A NUL-terminated string attribute, or up to its payload length when unterminated.
std::string stringOf(const nlattr* a) {
  const char* p = static_cast<const char*>(mnl_attr_get_payload(a));
  const size_t n = mnl_attr_get_payload_len(a);
  return std::string(p, strnlen(p, n));
}

// Walks the attributes after a fixed header of `offset` bytes; false when one is malformed.
template <typename F>
bool forEachAttr(const nlmsghdr* nlh, size_t offset, F&& f) {
  if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + MNL_ALIGN(offset)) return false;
  const auto* start = static_cast<const char*>(mnl_nlmsg_get_payload_offset(nlh, offset));
  const auto* end = static_cast<const char*>(mnl_nlmsg_get_payload_tail(nlh));
  const auto* attr = reinterpret_cast<const nlattr*>(start);
  while (end - reinterpret_cast<const char*>(attr) > 0) {
    const int left = static_cast<int>(end - reinterpret_cast<const char*>(attr));
    if (!mnl_attr_ok(attr, left)) return false;
    f(attr);
    attr = mnl_attr_next(attr);
  }
  return true;
}

Result<void> decodeAddress(const nlmsghdr* nlh, Message& m) {
  if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(ifaddrmsg)) {
    return fail(ErrorCode::kParse, "address message shorter than its ifaddrmsg");
  }
  const auto* ifa = static_cast<const ifaddrmsg*>(mnl_nlmsg_get_payload(nlh));
  if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) {
    m.kind = Message::Kind::kOther;  // e.g. AF_MCTP: not ours to read
    return {};
  }
  const Family fam = ifa->ifa_family == AF_INET ? Family::kInet : Family::kInet6;
  std::optional<IpAddress> local;
  std::optional<IpAddress> address;
  std::optional<uint32_t> flags;
  bool bad = false;
  bool ok = forEachAttr(nlh, sizeof(ifaddrmsg), [&](const nlattr* a) {
    switch (mnl_attr_get_type(a)) {
      case IFA_LOCAL:
        local = addressOf(fam, a);
        bad = bad || !local;
        break;
      case IFA_ADDRESS:
        address = addressOf(fam, a);
        bad = bad || !address;
        break;
      case IFA_LABEL:
        m.address.label = stringOf(a);
        break;
      case IFA_FLAGS:
        if (mnl_attr_get_payload_len(a) == sizeof(uint32_t)) flags = mnl_attr_get_u32(a);
        break;
      default:
        break;
    }
  });
  if (!ok || bad) return fail(ErrorCode::kParse, "malformed attribute in an address message");
  if (!local && !address) return fail(ErrorCode::kParse, "address message without an address");
  m.kind = Message::Kind::kAddress;
  m.address.ifindex = ifa->ifa_index;
  m.address.prefix = IpPrefix{local ? *local : *address, ifa->ifa_prefixlen};
  m.address.flags = flags.value_or(ifa->ifa_flags);
  m.address.scope = ifa->ifa_scope;
  return {};
}

Result<void> decodeRoute(const nlmsghdr* nlh, Message& m) {
  if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(rtmsg)) {
    return fail(ErrorCode::kParse, "route message shorter than its rtmsg");
  }
  const auto* rtm = static_cast<const rtmsg*>(mnl_nlmsg_get_payload(nlh));
  if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6) {
    m.kind = Message::Kind::kOther;  // e.g. RTNL_FAMILY_IPMR: not ours to read
    return {};
  }
  const Family fam = rtm->rtm_family == AF_INET ? Family::kInet : Family::kInet6;
  if (rtm->rtm_dst_len > (fam == Family::kInet ? 32 : 128)) {
    return fail(ErrorCode::kParse,
                "route with a destination length of " + std::to_string(rtm->rtm_dst_len));
  }
  RouteEntry& r = m.route;
  r.prefix = IpPrefix{IpAddress{}, rtm->rtm_dst_len};
  r.prefix.address.family = fam;
  r.table = rtm->rtm_table;
  r.protocol = rtm->rtm_protocol;
  r.type = rtm->rtm_type;
  bool bad = false;
  bool ok = forEachAttr(nlh, sizeof(rtmsg), [&](const nlattr* a) {
    const bool u32 = mnl_attr_get_payload_len(a) == sizeof(uint32_t);
    switch (mnl_attr_get_type(a)) {
      case RTA_DST:
        if (auto dst = addressOf(fam, a)) {
          r.prefix.address = *dst;
        } else {
          bad = true;
        }
        break;
      case RTA_TABLE:
        if (u32) r.table = mnl_attr_get_u32(a);
        bad = bad || !u32;
        break;
      case RTA_PRIORITY:
        if (u32) r.metric = mnl_attr_get_u32(a);
        bad = bad || !u32;
        break;
      case RTA_OIF:
        if (u32) r.ifindex = mnl_attr_get_u32(a);
        bad = bad || !u32;
        break;
      default:
        break;
    }
  });
  if (!ok || bad) return fail(ErrorCode::kParse, "malformed attribute in a route message");
  m.kind = Message::Kind::kRoute;
  return {};
}

Result<void> decodeLink(const nlmsghdr* nlh, Message& m) {
  if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(ifinfomsg)) {
    return fail(ErrorCode::kParse, "RTM_NEWLINK shorter than its ifinfomsg");
  }
  const auto* ifi = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(nlh));
  bool ok = forEachAttr(nlh, sizeof(ifinfomsg), [&](const nlattr* a) {
    if (mnl_attr_get_type(a) == IFLA_IFNAME) m.link.name = stringOf(a);
  });
  if (!ok) return fail(ErrorCode::kParse, "malformed attribute in RTM_NEWLINK");
  m.kind = Message::Kind::kLink;
  m.link.ifindex = static_cast<uint32_t>(ifi->ifi_index);
  return {};
}

}  // namespace

Result<void> validateLabel(std::string_view label, std::string_view interface) {
  if (label.size() > IFNAMSIZ - 1) {
    return fail(ErrorCode::kInvalidArgument,
                "label \"" + std::string(label) + "\" is longer than 15 characters");
  }
  if (interface.empty() || label.substr(0, interface.size()) != interface) {
    return fail(ErrorCode::kInvalidArgument,
                "label \"" + std::string(label) + "\" must start with its interface name \"" +
                    std::string(interface) + "\", e.g. \"" + std::string(interface) + ":web\"");
  }
  return {};
}

Result<std::vector<uint8_t>> encodeNewAddress(const AddressRequest& req, uint32_t seq) {
  return encodeAddress(RTM_NEWADDR, NLM_F_REQUEST | NLM_F_ACK | NLM_F_EXCL | NLM_F_CREATE, req, seq,
                       /*with_label=*/true);
}

Result<std::vector<uint8_t>> encodeDeleteAddress(const AddressRequest& req, uint32_t seq) {
  // No label and no flags: the kernel matches the address and prefix on the interface.
  return encodeAddress(RTM_DELADDR, NLM_F_REQUEST | NLM_F_ACK, req, seq, /*with_label=*/false);
}

std::vector<uint8_t> encodeDumpAddresses(Family family, uint32_t seq) {
  Builder b(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, seq);
  auto* ifa = b.extra<ifaddrmsg>();
  ifa->ifa_family = afOf(family);
  return b.bytes();
}

namespace {

Result<std::vector<uint8_t>> encodeRoute(uint16_t type, uint16_t flags, const RouteRequest& req,
                                         uint32_t seq, bool add) {
  const Family fam = req.prefix.address.family;
  if (req.prefix.length < 0 || req.prefix.length > req.prefix.address.maxPrefix()) {
    return fail(ErrorCode::kInvalidArgument, "prefix length " + std::to_string(req.prefix.length) +
                                                 " is out of range for " + req.prefix.toString());
  }
  if (req.table == RT_TABLE_UNSPEC || req.table == RT_TABLE_LOCAL) {
    return fail(ErrorCode::kInvalidArgument,
                "table " + std::to_string(req.table) + " for " + req.prefix.toString() +
                    ": routes go in the main table or one of their own, not 0 or local (255)");
  }
  Builder b(type, flags, seq);
  auto* rtm = b.extra<rtmsg>();
  rtm->rtm_family = afOf(fam);
  rtm->rtm_dst_len = static_cast<uint8_t>(req.prefix.length);
  rtm->rtm_table =
      req.table < 256 ? static_cast<uint8_t>(req.table) : static_cast<uint8_t>(RT_TABLE_UNSPEC);
  rtm->rtm_protocol = req.protocol;
  if (!add) {
    // Any type and scope: the kernel matches the destination, table, protocol, metric and
    // interface, so only tandem's own route goes.
    rtm->rtm_scope = RT_SCOPE_NOWHERE;
    rtm->rtm_type = RTN_UNSPEC;
  } else if (req.ifindex == 0) {
    rtm->rtm_scope = RT_SCOPE_UNIVERSE;
    rtm->rtm_type = RTN_BLACKHOLE;
  } else {
    // An IPv4 route through an interface without a gateway is link scope, as `ip` makes it.
    rtm->rtm_scope = fam == Family::kInet ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
    rtm->rtm_type = RTN_UNICAST;
  }
  mnl_attr_put(b.nlh(), RTA_DST, addressLength(fam), req.prefix.address.bytes.data());
  if (req.table >= 256) mnl_attr_put_u32(b.nlh(), RTA_TABLE, req.table);
  if (req.metric != 0) mnl_attr_put_u32(b.nlh(), RTA_PRIORITY, req.metric);
  if (req.ifindex != 0) mnl_attr_put_u32(b.nlh(), RTA_OIF, req.ifindex);
  return b.bytes();
}

}  // namespace

Result<std::vector<uint8_t>> encodeNewRoute(const RouteRequest& req, uint32_t seq) {
  return encodeRoute(RTM_NEWROUTE, NLM_F_REQUEST | NLM_F_ACK | NLM_F_EXCL | NLM_F_CREATE, req, seq,
                     /*add=*/true);
}

Result<std::vector<uint8_t>> encodeDeleteRoute(const RouteRequest& req, uint32_t seq) {
  return encodeRoute(RTM_DELROUTE, NLM_F_REQUEST | NLM_F_ACK, req, seq, /*add=*/false);
}

std::vector<uint8_t> encodeDumpRoutes(Family family, uint32_t table, uint8_t protocol,
                                      uint32_t seq) {
  Builder b(RTM_GETROUTE, NLM_F_REQUEST | NLM_F_DUMP, seq);
  auto* rtm = b.extra<rtmsg>();
  rtm->rtm_family = afOf(family);
  rtm->rtm_protocol = protocol;
  mnl_attr_put_u32(b.nlh(), RTA_TABLE, table);
  return b.bytes();
}

std::vector<uint8_t> encodeGetLink(std::string_view name, uint32_t ifindex, uint32_t seq) {
  Builder b(RTM_GETLINK, NLM_F_REQUEST, seq);
  auto* ifi = b.extra<ifinfomsg>();
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = static_cast<int>(ifindex);
  // No VF details and no statistics: the reply is a third of the size.
  mnl_attr_put_u32(b.nlh(), IFLA_EXT_MASK, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS);
  if (!name.empty()) {
    std::string z(name.substr(0, IFNAMSIZ - 1));
    mnl_attr_put_strz(b.nlh(), IFLA_IFNAME, z.c_str());
  }
  return b.bytes();
}

std::vector<uint8_t> encodeSetLinkUp(uint32_t ifindex, uint32_t seq) {
  Builder b(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, seq);
  auto* ifi = b.extra<ifinfomsg>();
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = static_cast<int>(ifindex);
  ifi->ifi_flags = IFF_UP;
  ifi->ifi_change = IFF_UP;  // only this flag: the others stay as they are
  return b.bytes();
}

Result<std::vector<Message>> decode(std::span<const uint8_t> bytes) {
  std::vector<Message> out;
  auto walked = netlink::forEachMessage(bytes, [&](const nlmsghdr* nlh, size_t) -> Result<void> {
    Message m;
    netlink::copyHeader(nlh, m);
    Result<void> r;
    switch (nlh->nlmsg_type) {
      case RTM_NEWADDR:
      case RTM_DELADDR:  // a removal's notification: the same body (m.type says which)
        r = decodeAddress(nlh, m);
        break;
      case RTM_NEWLINK:
        r = decodeLink(nlh, m);
        break;
      case RTM_NEWROUTE:
      case RTM_DELROUTE:
        r = decodeRoute(nlh, m);
        break;
      case NLMSG_ERROR:
        r = netlink::decodeAckInto(nlh, m);
        break;
      case NLMSG_DONE:
        m.kind = Message::Kind::kDone;
        m.error = netlink::doneError(nlh);  // a dump that failed part way
        break;
      default:
        break;
    }
    if (!r) return r;
    out.push_back(std::move(m));
    return {};
  });
  if (!walked) return fail(walked.error());
  return out;
}

Error ackError(int err, std::string_view what, std::string_view kernel_message) {
  return netlink::ackError(
      err, what, kernel_message,
      {{ENODEV, ErrorCode::kNotFound},
       {EADDRNOTAVAIL, ErrorCode::kNotFound},
       {ESRCH, ErrorCode::kNotFound}});  // ESRCH: a route to delete is not there
}

}  // namespace tandem::resources::rtnl
