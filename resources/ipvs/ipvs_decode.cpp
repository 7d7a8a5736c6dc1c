// Decoding the kernel's replies: dumps of services, destinations and sync daemons, the family
// lookup, acks. Each attribute nest is read by a table (decodeNest); the requests are in
// ipvs_codec.cpp.
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/ip_vs.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <optional>
#include <utility>

#include "ipvs/ipvs_codec.h"
#include "netlink/netlink_message.h"

namespace tandem::resources::ipvs::codec {
namespace {

size_t addressLength(Family f) { return f == Family::kInet ? 4 : 16; }

// Walks the attributes from start to end; false when one is malformed.
template <typename F>
bool forEachAttr(const void* start, const void* end, F&& f) {
  const auto* attr = static_cast<const nlattr*>(start);
  const auto* stop = static_cast<const char*>(end);
  while (stop - reinterpret_cast<const char*>(attr) > 0) {
    const int left = static_cast<int>(stop - reinterpret_cast<const char*>(attr));
    if (!mnl_attr_ok(attr, left)) return false;
    if (!f(attr)) return false;
    attr = mnl_attr_next(attr);
  }
  return true;
}

template <typename F>
bool forEachNested(const nlattr* nest, F&& f) {
  const char* start = static_cast<const char*>(mnl_attr_get_payload(nest));
  return forEachAttr(start, start + mnl_attr_get_payload_len(nest), f);
}

bool lenIs(const nlattr* a, size_t n) { return mnl_attr_get_payload_len(a) == n; }

// A string attribute: NUL-terminated within its payload, or all of it when unterminated.
std::string stringOf(const nlattr* a) {
  const char* p = static_cast<const char*>(mnl_attr_get_payload(a));
  return std::string(p, strnlen(p, mnl_attr_get_payload_len(a)));
}

std::optional<Family> familyOf(uint16_t af) {
  if (af == AF_INET) return Family::kInet;
  if (af == AF_INET6) return Family::kInet6;
  return std::nullopt;
}

// One attribute of a nest the decoder reads: its type, its name in a diagnostic, the payload
// length the kernel sends (0: any length; the reader or the checks after the walk judge it),
// and where its value goes. Each nest is a table of these: a new attribute is one line.
template <typename Into>
struct AttrField {
  uint16_t type;
  const char* name;
  size_t len;
  void (*read)(const nlattr*, Into&);
};

// Reads a nest by its table. An attribute of the wrong length stops the walk and names itself in
// bad; one the table does not list (a newer kernel's) is skipped. False also for a malformed
// attribute header, bad then null.
template <typename Into, size_t N>
bool decodeNest(const nlattr* nest, const AttrField<Into> (&table)[N], Into& into,
                const char*& bad) {
  return forEachNested(nest, [&](const nlattr* a) {
    const uint16_t type = mnl_attr_get_type(a);
    for (const AttrField<Into>& f : table) {
      if (f.type != type) continue;
      if (f.len != 0 && !lenIs(a, f.len)) return (bad = f.name), false;
      f.read(a, into);
      break;
    }
    return true;
  });
}

// IPVS_STATS_ATTR_*: u64 in STATS64; in the older STATS the byte counters are u64, the rest u32.
constexpr std::pair<uint16_t, uint64_t Stats::*> kStatsFields[] = {
    {IPVS_STATS_ATTR_CONNS, &Stats::conns},        {IPVS_STATS_ATTR_INPKTS, &Stats::in_pkts},
    {IPVS_STATS_ATTR_OUTPKTS, &Stats::out_pkts},   {IPVS_STATS_ATTR_INBYTES, &Stats::in_bytes},
    {IPVS_STATS_ATTR_OUTBYTES, &Stats::out_bytes}, {IPVS_STATS_ATTR_CPS, &Stats::cps},
    {IPVS_STATS_ATTR_INPPS, &Stats::in_pps},       {IPVS_STATS_ATTR_OUTPPS, &Stats::out_pps},
    {IPVS_STATS_ATTR_INBPS, &Stats::in_bps},       {IPVS_STATS_ATTR_OUTBPS, &Stats::out_bps},
};

bool decodeStats(const nlattr* nest, Stats& s) {
  return forEachNested(nest, [&](const nlattr* a) {
    uint64_t v = 0;
    if (lenIs(a, 8)) {
      v = mnl_attr_get_u64(a);
    } else if (lenIs(a, 4)) {
      v = mnl_attr_get_u32(a);
    } else {
      return mnl_attr_get_type(a) == IPVS_STATS_ATTR_PAD;
    }
    for (const auto& [type, field] : kStatsFields) {
      if (type == mnl_attr_get_type(a)) s.*field = v;
    }
    return true;
  });
}

// The stats of a service or a destination: STATS64 when the kernel sent it, else STATS.
bool decodeEitherStats(const nlattr* stats, const nlattr* stats64, Stats& out) {
  if (stats64 != nullptr) return decodeStats(stats64, out);
  return stats == nullptr || decodeStats(stats, out);
}

// What a service nest's walk gathers beside the service itself, for the checks after it.
struct ServiceAttrs {
  ServiceState* out = nullptr;
  std::optional<uint16_t> af;
  const nlattr* addr = nullptr;
  const nlattr* stats = nullptr;
  const nlattr* stats64 = nullptr;
  bool has_proto = false;
  bool has_port = false;
  bool has_sched = false;
};

constexpr AttrField<ServiceAttrs> kServiceAttrs[] = {
    {IPVS_SVC_ATTR_AF, "AF", 2,
     [](const nlattr* a, ServiceAttrs& s) { s.af = mnl_attr_get_u16(a); }},
    {IPVS_SVC_ATTR_PROTOCOL, "PROTOCOL", 2,
     [](const nlattr* a, ServiceAttrs& s) {
       s.out->service.key.protocol = mnl_attr_get_u16(a);
       s.has_proto = true;
     }},
    {IPVS_SVC_ATTR_ADDR, "ADDR", 0, [](const nlattr* a, ServiceAttrs& s) { s.addr = a; }},
    {IPVS_SVC_ATTR_PORT, "PORT", 2,
     [](const nlattr* a, ServiceAttrs& s) {
       s.out->service.key.port = ntohs(mnl_attr_get_u16(a));
       s.has_port = true;
     }},
    {IPVS_SVC_ATTR_FWMARK, "FWMARK", 4,
     [](const nlattr* a, ServiceAttrs& s) { s.out->service.key.fwmark = mnl_attr_get_u32(a); }},
    {IPVS_SVC_ATTR_SCHED_NAME, "SCHED_NAME", 0,
     [](const nlattr* a, ServiceAttrs& s) {
       s.out->service.scheduler = stringOf(a);
       s.has_sched = true;
     }},
    {IPVS_SVC_ATTR_PE_NAME, "PE_NAME", 0,
     [](const nlattr* a, ServiceAttrs& s) { s.out->service.pe_name = stringOf(a); }},
    {IPVS_SVC_ATTR_FLAGS, "FLAGS", sizeof(ip_vs_flags),
     [](const nlattr* a, ServiceAttrs& s) {
       ip_vs_flags f{};
       std::memcpy(&f, mnl_attr_get_payload(a), sizeof(f));
       s.out->service.flags = f.flags & ~static_cast<uint32_t>(IP_VS_SVC_F_HASHED);
     }},
    {IPVS_SVC_ATTR_TIMEOUT, "TIMEOUT", 4,
     [](const nlattr* a, ServiceAttrs& s) { s.out->service.timeout_s = mnl_attr_get_u32(a); }},
    {IPVS_SVC_ATTR_NETMASK, "NETMASK", 4,
     [](const nlattr* a, ServiceAttrs& s) { s.out->service.netmask = mnl_attr_get_u32(a); }},
    {IPVS_SVC_ATTR_STATS, "STATS", 0, [](const nlattr* a, ServiceAttrs& s) { s.stats = a; }},
    {IPVS_SVC_ATTR_STATS64, "STATS64", 0, [](const nlattr* a, ServiceAttrs& s) { s.stats64 = a; }},
};

// One IPVS_CMD_ATTR_SERVICE nest, as in a dump reply.
Result<void> decodeService(const nlattr* nest, ServiceState& out) {
  Service& s = out.service;
  ServiceAttrs got;
  got.out = &out;
  const char* bad = nullptr;
  if (!decodeNest(nest, kServiceAttrs, got, bad)) {
    return fail(ErrorCode::kParse, std::string("malformed service attribute") +
                                       (bad != nullptr ? std::string(" ") + bad : ""));
  }
  if (!got.af) return fail(ErrorCode::kParse, "service without an address family");
  auto fam = familyOf(*got.af);
  if (!fam) return fail(ErrorCode::kParse, "service of address family " + std::to_string(*got.af));
  s.key.family = *fam;
  if (s.key.fwmark == 0) {
    if (!got.has_proto || got.addr == nullptr || !got.has_port) {
      return fail(ErrorCode::kParse, "service without protocol, address and port, or fwmark");
    }
    const size_t want = addressLength(*fam);
    if (mnl_attr_get_payload_len(got.addr) < want) {
      return fail(ErrorCode::kParse,
                  "service address shorter than an " + std::string(familyName(*fam)) + " address");
    }
    s.key.address.family = *fam;
    std::memcpy(s.key.address.bytes.data(), mnl_attr_get_payload(got.addr), want);
  } else {
    s.key.protocol = 0;
  }
  if (!got.has_sched)
    return fail(ErrorCode::kParse, "service " + s.key.toString() + " without a scheduler");
  if (*fam == Family::kInet) {
    s.netmask = ntohl(s.netmask);
    if (s.netmask == 0xffffffffU) s.netmask = 0;
  } else if (s.netmask == 128) {
    s.netmask = 0;
  }
  if (!decodeEitherStats(got.stats, got.stats64, out.stats)) {
    return fail(ErrorCode::kParse, "malformed service stats");
  }
  return {};
}

// What a destination nest's walk gathers beside the destination itself.
struct DestAttrs {
  DestinationState* out = nullptr;
  std::optional<uint16_t> af;
  const nlattr* addr = nullptr;
  const nlattr* stats = nullptr;
  const nlattr* stats64 = nullptr;
  bool has_port = false;
};

constexpr AttrField<DestAttrs> kDestAttrs[] = {
    {IPVS_DEST_ATTR_ADDR, "ADDR", 0, [](const nlattr* a, DestAttrs& d) { d.addr = a; }},
    {IPVS_DEST_ATTR_PORT, "PORT", 2,
     [](const nlattr* a, DestAttrs& d) {
       d.out->dest.key.port = ntohs(mnl_attr_get_u16(a));
       d.has_port = true;
     }},
    {IPVS_DEST_ATTR_FWD_METHOD, "FWD_METHOD", 4,
     [](const nlattr* a, DestAttrs& d) {
       d.out->dest.forward = static_cast<Forward>(mnl_attr_get_u32(a) & IP_VS_CONN_F_FWD_MASK);
     }},
    {IPVS_DEST_ATTR_WEIGHT, "WEIGHT", 4,
     [](const nlattr* a, DestAttrs& d) {
       d.out->dest.weight = static_cast<int32_t>(mnl_attr_get_u32(a));
     }},
    {IPVS_DEST_ATTR_U_THRESH, "U_THRESH", 4,
     [](const nlattr* a, DestAttrs& d) { d.out->dest.upper_threshold = mnl_attr_get_u32(a); }},
    {IPVS_DEST_ATTR_L_THRESH, "L_THRESH", 4,
     [](const nlattr* a, DestAttrs& d) { d.out->dest.lower_threshold = mnl_attr_get_u32(a); }},
    {IPVS_DEST_ATTR_ACTIVE_CONNS, "ACTIVE_CONNS", 4,
     [](const nlattr* a, DestAttrs& d) { d.out->active_conns = mnl_attr_get_u32(a); }},
    {IPVS_DEST_ATTR_INACT_CONNS, "INACT_CONNS", 4,
     [](const nlattr* a, DestAttrs& d) { d.out->inactive_conns = mnl_attr_get_u32(a); }},
    {IPVS_DEST_ATTR_PERSIST_CONNS, "PERSIST_CONNS", 4,
     [](const nlattr* a, DestAttrs& d) { d.out->persistent_conns = mnl_attr_get_u32(a); }},
    {IPVS_DEST_ATTR_ADDR_FAMILY, "ADDR_FAMILY", 2,
     [](const nlattr* a, DestAttrs& d) { d.af = mnl_attr_get_u16(a); }},
    {IPVS_DEST_ATTR_TUN_TYPE, "TUN_TYPE", 1,
     [](const nlattr* a, DestAttrs& d) {
       d.out->dest.tunnel_type = static_cast<Tunnel>(mnl_attr_get_u8(a));
     }},
    {IPVS_DEST_ATTR_TUN_PORT, "TUN_PORT", 2,
     [](const nlattr* a, DestAttrs& d) { d.out->dest.tunnel_port = ntohs(mnl_attr_get_u16(a)); }},
    {IPVS_DEST_ATTR_TUN_FLAGS, "TUN_FLAGS", 2,
     [](const nlattr* a, DestAttrs& d) { d.out->dest.tunnel_flags = mnl_attr_get_u16(a); }},
    {IPVS_DEST_ATTR_STATS, "STATS", 0, [](const nlattr* a, DestAttrs& d) { d.stats = a; }},
    {IPVS_DEST_ATTR_STATS64, "STATS64", 0, [](const nlattr* a, DestAttrs& d) { d.stats64 = a; }},
};

Result<void> decodeDest(const nlattr* nest, DestinationState& out) {
  Destination& d = out.dest;
  DestAttrs got;
  got.out = &out;
  const char* bad = nullptr;
  if (!decodeNest(nest, kDestAttrs, got, bad)) {
    return fail(ErrorCode::kParse, std::string("malformed destination attribute") +
                                       (bad != nullptr ? std::string(" ") + bad : ""));
  }
  if (got.addr == nullptr || !got.has_port) {
    return fail(ErrorCode::kParse, "destination without address and port");
  }
  // Kernels before 4.x send no ADDR_FAMILY: the destination is then of its service's family,
  // which a dump of one service's destinations does not repeat; IPv4 is the safe reading only
  // when the rest of the address is zero.
  Family fam = Family::kInet;
  if (got.af) {
    auto f = familyOf(*got.af);
    if (!f) {
      return fail(ErrorCode::kParse, "destination of address family " + std::to_string(*got.af));
    }
    fam = *f;
  } else if (mnl_attr_get_payload_len(got.addr) == 16) {
    const auto* p = static_cast<const uint8_t*>(mnl_attr_get_payload(got.addr));
    for (size_t i = 4; i < 16; ++i) {
      if (p[i] != 0) fam = Family::kInet6;
    }
  }
  const size_t want = addressLength(fam);
  if (mnl_attr_get_payload_len(got.addr) < want) {
    return fail(ErrorCode::kParse,
                "destination address shorter than an " + std::string(familyName(fam)) + " address");
  }
  d.family = fam;
  d.key.address.family = fam;
  std::memcpy(d.key.address.bytes.data(), mnl_attr_get_payload(got.addr), want);
  if (!decodeEitherStats(got.stats, got.stats64, out.stats)) {
    return fail(ErrorCode::kParse, "malformed destination stats");
  }
  return {};
}

// One IPVS_CMD_ATTR_DAEMON nest of a GET_DAEMON dump. The 6.1 kernel sends every attribute
// with its defaults filled in: a group, port, TTL and maxlen the request left out read back as
// 224.0.0.81, 8848, 1 and the interface's MTU less the IP and UDP headers (1472 for IPv4 and
// 1452 for an IPv6 group on a 1500-byte link). Older kernels send STATE, MCAST_IFN and SYNC_ID
// alone.
// What a daemon nest's walk gathers beside the daemon itself.
struct DaemonAttrs {
  SyncDaemon* out = nullptr;
  std::optional<uint32_t> state;
  const nlattr* ifname = nullptr;
};

constexpr AttrField<DaemonAttrs> kDaemonAttrs[] = {
    {IPVS_DAEMON_ATTR_STATE, "STATE", 4,
     [](const nlattr* a, DaemonAttrs& d) { d.state = mnl_attr_get_u32(a); }},
    {IPVS_DAEMON_ATTR_MCAST_IFN, "MCAST_IFN", 0,
     [](const nlattr* a, DaemonAttrs& d) { d.ifname = a; }},
    {IPVS_DAEMON_ATTR_SYNC_ID, "SYNC_ID", 4,
     [](const nlattr* a, DaemonAttrs& d) { d.out->sync_id = mnl_attr_get_u32(a); }},
    {IPVS_DAEMON_ATTR_SYNC_MAXLEN, "SYNC_MAXLEN", 2,
     [](const nlattr* a, DaemonAttrs& d) { d.out->max_len = mnl_attr_get_u16(a); }},
    {IPVS_DAEMON_ATTR_MCAST_GROUP, "MCAST_GROUP", 4,
     [](const nlattr* a, DaemonAttrs& d) {
       d.out->group = IpAddress{};
       d.out->group.family = Family::kInet;
       std::memcpy(d.out->group.bytes.data(), mnl_attr_get_payload(a), 4);
     }},
    {IPVS_DAEMON_ATTR_MCAST_GROUP6, "MCAST_GROUP6", 16,
     [](const nlattr* a, DaemonAttrs& d) {
       d.out->group.family = Family::kInet6;
       std::memcpy(d.out->group.bytes.data(), mnl_attr_get_payload(a), 16);
     }},
    {IPVS_DAEMON_ATTR_MCAST_PORT, "MCAST_PORT", 2,  // host order, as sent
     [](const nlattr* a, DaemonAttrs& d) { d.out->port = mnl_attr_get_u16(a); }},
    {IPVS_DAEMON_ATTR_MCAST_TTL, "MCAST_TTL", 1,
     [](const nlattr* a, DaemonAttrs& d) { d.out->ttl = mnl_attr_get_u8(a); }},
};

Result<void> decodeDaemon(const nlattr* nest, SyncDaemon& d) {
  DaemonAttrs got;
  got.out = &d;
  const char* bad = nullptr;
  const bool ok = decodeNest(nest, kDaemonAttrs, got, bad);
  if (!ok) {
    if (bad == nullptr) return fail(ErrorCode::kParse, "malformed sync daemon attribute");
    return fail(
        ErrorCode::kParse,
        std::string("malformed sync daemon attribute IPVS_DAEMON_ATTR_") + bad + " (wrong length)");
  }
  if (got.ifname != nullptr) {
    const char* p = static_cast<const char*>(mnl_attr_get_payload(got.ifname));
    const size_t len = strnlen(p, mnl_attr_get_payload_len(got.ifname));
    if (len >= IP_VS_IFNAME_MAXLEN) {
      return fail(ErrorCode::kParse,
                  "malformed sync daemon attribute IPVS_DAEMON_ATTR_MCAST_IFN longer than " +
                      std::to_string(IP_VS_IFNAME_MAXLEN - 1) + " characters");
    }
    d.interface.assign(p, len);
  }
  const auto& state = got.state;
  if (!state) return fail(ErrorCode::kParse, "sync daemon without IPVS_DAEMON_ATTR_STATE");
  if (*state == IP_VS_STATE_MASTER) {
    d.state = SyncState::kMaster;
  } else if (*state == IP_VS_STATE_BACKUP) {
    d.state = SyncState::kBackup;
  } else {
    return fail(ErrorCode::kParse,
                "sync daemon of unknown IPVS_DAEMON_ATTR_STATE " + std::to_string(*state));
  }
  return {};
}

const void* payloadAfterGenl(const nlmsghdr* nlh) {
  return mnl_nlmsg_get_payload_offset(nlh, sizeof(genlmsghdr));
}

Result<void> decodeIpvs(const nlmsghdr* nlh, Message& m) {
  const void* start = payloadAfterGenl(nlh);
  const void* end = mnl_nlmsg_get_payload_tail(nlh);
  Result<void> inner;
  bool seen = false;
  bool ok = forEachAttr(start, end, [&](const nlattr* a) {
    const uint16_t type = mnl_attr_get_type(a);
    if (m.cmd == IPVS_CMD_NEW_SERVICE && type == IPVS_CMD_ATTR_SERVICE) {
      inner = decodeService(a, m.service);
      seen = true;
      m.kind = Message::Kind::kService;
    } else if (m.cmd == IPVS_CMD_NEW_DEST && type == IPVS_CMD_ATTR_DEST) {
      inner = decodeDest(a, m.dest);
      seen = true;
      m.kind = Message::Kind::kDest;
    } else if (m.cmd == IPVS_CMD_NEW_DAEMON && type == IPVS_CMD_ATTR_DAEMON) {
      inner = decodeDaemon(a, m.daemon);
      seen = true;
      m.kind = Message::Kind::kDaemon;
    } else if (m.cmd == IPVS_CMD_SET_CONFIG) {
      if (!lenIs(a, 4)) return false;
      m.kind = Message::Kind::kConfig;
      seen = true;
      if (type == IPVS_CMD_ATTR_TIMEOUT_TCP) m.timeouts.tcp = mnl_attr_get_u32(a);
      if (type == IPVS_CMD_ATTR_TIMEOUT_TCP_FIN) m.timeouts.tcpfin = mnl_attr_get_u32(a);
      if (type == IPVS_CMD_ATTR_TIMEOUT_UDP) m.timeouts.udp = mnl_attr_get_u32(a);
    }
    return static_cast<bool>(inner);
  });
  if (!inner) return inner;
  if (!ok)
    return fail(ErrorCode::kParse, "malformed attribute in IPVS command " + std::to_string(m.cmd));
  if (!seen && (m.cmd == IPVS_CMD_NEW_SERVICE || m.cmd == IPVS_CMD_NEW_DEST ||
                m.cmd == IPVS_CMD_NEW_DAEMON)) {
    return fail(ErrorCode::kParse,
                "IPVS command " + std::to_string(m.cmd) + " without its attribute");
  }
  return {};
}

Result<void> decodeCtrl(const nlmsghdr* nlh, Message& m) {
  if (m.cmd != CTRL_CMD_NEWFAMILY) return {};
  std::optional<uint16_t> id;
  bool ok =
      forEachAttr(payloadAfterGenl(nlh), mnl_nlmsg_get_payload_tail(nlh), [&](const nlattr* a) {
        if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID) {
          if (!lenIs(a, 2)) return false;
          id = mnl_attr_get_u16(a);
        }
        return true;
      });
  if (!ok) return fail(ErrorCode::kParse, "malformed attribute in a CTRL_CMD_NEWFAMILY");
  if (!id) return fail(ErrorCode::kParse, "CTRL_CMD_NEWFAMILY without a family id");
  m.kind = Message::Kind::kFamily;
  m.family_id = *id;
  return {};
}

}  // namespace

Result<std::vector<Message>> decode(std::span<const uint8_t> bytes, uint16_t family_id) {
  std::vector<Message> out;
  auto walked = netlink::forEachMessage(bytes, [&](const nlmsghdr* nlh, size_t at) -> Result<void> {
    Message m;
    netlink::copyHeader(nlh, m);
    Result<void> r;
    const bool genl = m.type == kCtrlFamily || (family_id != 0 && m.type == family_id);
    if (genl) {
      if (mnl_nlmsg_get_payload_len(nlh) < sizeof(genlmsghdr)) {
        return fail(ErrorCode::kParse, "generic netlink message at byte " + std::to_string(at) +
                                           " shorter than its header");
      }
      m.cmd = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh))->cmd;
      r = m.type == kCtrlFamily ? decodeCtrl(nlh, m) : decodeIpvs(nlh, m);
    } else if (m.type == NLMSG_ERROR) {
      r = netlink::decodeAckInto(nlh, m);
    } else if (m.type == NLMSG_DONE) {
      m.kind = Message::Kind::kDone;
      m.error = netlink::doneError(nlh);  // a dump that failed part way
    }
    if (!r) {
      return fail(ErrorCode::kParse,
                  "netlink message at byte " + std::to_string(at) + ": " + r.error().message);
    }
    out.push_back(std::move(m));
    return {};
  });
  if (!walked) return fail(walked.error());
  return out;
}

}  // namespace tandem::resources::ipvs::codec
