#include "ipvs/ipvs_codec.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/ip_vs.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "netlink/netlink_message.h"

namespace tandem::resources::ipvs::codec {
namespace {

// The kernel copies the address attribute into a union nf_inet_addr; ipvsadm sends all of it.
constexpr size_t kInetAddrSize = 16;

uint16_t afOf(Family f) { return f == Family::kInet ? AF_INET : AF_INET6; }
size_t addressLength(Family f) { return f == Family::kInet ? 4 : 16; }

// A generic netlink request: the netlink header, then genlmsghdr.
class Builder : public netlink::RequestBuilder {
 public:
  Builder(uint16_t type, uint16_t flags, uint8_t cmd, uint8_t version, uint32_t seq)
      : RequestBuilder(type, flags, seq) {
    auto* g = extra<genlmsghdr>();
    g->cmd = cmd;
    g->version = version;
  }
};

Result<void> checkKey(const ServiceKey& key) {
  if (key.fwmark != 0) return {};
  if (key.protocol != IPPROTO_TCP && key.protocol != IPPROTO_UDP && key.protocol != IPPROTO_SCTP) {
    return fail(ErrorCode::kInvalidArgument,
                "service " + key.toString() + ": IPVS serves tcp, udp and sctp, or a fwmark");
  }
  if (key.address.family != key.family) {
    return fail(ErrorCode::kInvalidArgument,
                "service " + key.toString() + ": the address is not of the service's family");
  }
  return {};
}

void putKey(nlmsghdr* nlh, const ServiceKey& key) {
  mnl_attr_put_u16(nlh, IPVS_SVC_ATTR_AF, afOf(key.family));
  if (key.fwmark != 0) {
    mnl_attr_put_u32(nlh, IPVS_SVC_ATTR_FWMARK, key.fwmark);
    return;
  }
  mnl_attr_put_u16(nlh, IPVS_SVC_ATTR_PROTOCOL, key.protocol);
  std::array<uint8_t, kInetAddrSize> addr{};
  std::memcpy(addr.data(), key.address.bytes.data(), addressLength(key.family));
  mnl_attr_put(nlh, IPVS_SVC_ATTR_ADDR, addr.size(), addr.data());
  mnl_attr_put_u16(nlh, IPVS_SVC_ATTR_PORT, htons(key.port));
}

uint32_t wireNetmask(const Service& s) {
  if (s.key.family == Family::kInet6) return s.netmask == 0 ? 128 : s.netmask;
  return htonl(s.netmask == 0 ? 0xffffffffU : s.netmask);
}

Result<void> checkService(const Service& s) {
  if (auto r = checkKey(s.key); !r) return r;
  const std::string where = "service " + s.key.toString();
  if (s.scheduler.empty() || s.scheduler.size() >= IP_VS_SCHEDNAME_MAXLEN) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": scheduler \"" + s.scheduler + "\" must be 1 to " +
                    std::to_string(IP_VS_SCHEDNAME_MAXLEN - 1) + " characters");
  }
  if (s.pe_name.size() >= IP_VS_PENAME_MAXLEN) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": persistence engine \"" + s.pe_name + "\" is too long");
  }
  if (s.key.family == Family::kInet6 && s.netmask > 128) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": an IPv6 netmask is a prefix length of 1 to 128, not " +
                    std::to_string(s.netmask));
  }
  return {};
}

// The IPVS_CMD_ATTR_SERVICE nest. Only NEW_SERVICE and SET_SERVICE read the settings; every
// other request carries the key with empty settings, as ipvsadm sends it (the kernel reads the
// key alone there).
void putService(nlmsghdr* nlh, const Service& s, bool with_settings) {
  nlattr* nest = mnl_attr_nest_start(nlh, IPVS_CMD_ATTR_SERVICE);
  putKey(nlh, s.key);
  Service empty;
  empty.key = s.key;
  empty.scheduler.clear();
  const Service& v = with_settings ? s : empty;
  mnl_attr_put_strz(nlh, IPVS_SVC_ATTR_SCHED_NAME, v.scheduler.c_str());
  if (!v.pe_name.empty()) mnl_attr_put_strz(nlh, IPVS_SVC_ATTR_PE_NAME, v.pe_name.c_str());
  ip_vs_flags flags{v.flags & ~static_cast<uint32_t>(IP_VS_SVC_F_HASHED), ~0U};
  mnl_attr_put(nlh, IPVS_SVC_ATTR_FLAGS, sizeof(flags), &flags);
  mnl_attr_put_u32(nlh, IPVS_SVC_ATTR_TIMEOUT, v.timeout_s);
  mnl_attr_put_u32(nlh, IPVS_SVC_ATTR_NETMASK, wireNetmask(v));
  mnl_attr_nest_end(nlh, nest);
}

// The key alone: what a GET_DEST dump names its service by.
void putServiceKey(nlmsghdr* nlh, const ServiceKey& key) {
  nlattr* nest = mnl_attr_nest_start(nlh, IPVS_CMD_ATTR_SERVICE);
  putKey(nlh, key);
  mnl_attr_nest_end(nlh, nest);
}

std::string destText(const Destination& d) {
  std::string a = d.key.address.toString();
  if (d.family == Family::kInet6) a = "[" + a + "]";
  return a + ":" + std::to_string(d.key.port);
}

std::string destWhere(const Service& s, const Destination& d) {
  return "destination " + destText(d) + " of service " + s.key.toString();
}

Result<void> checkDest(const Service& s, const Destination& d) {
  if (auto r = checkKey(s.key); !r) return r;
  const std::string where = destWhere(s, d);
  if (d.key.address.family != d.family) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": the address is not of the destination's family");
  }
  if (d.family != s.key.family && d.forward != Forward::kTunnel) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": only a tunnelled destination may differ in family from its service");
  }
  if (d.weight < 0) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": weight " + std::to_string(d.weight) + " is negative");
  }
  if (static_cast<uint32_t>(d.forward) > static_cast<uint32_t>(Forward::kBypass)) {
    return fail(ErrorCode::kInvalidArgument, where + ": unknown forwarding method");
  }
  return {};
}

void putDest(nlmsghdr* nlh, const Destination& d) {
  nlattr* nest = mnl_attr_nest_start(nlh, IPVS_CMD_ATTR_DEST);
  std::array<uint8_t, kInetAddrSize> addr{};
  std::memcpy(addr.data(), d.key.address.bytes.data(), addressLength(d.family));
  mnl_attr_put_u16(nlh, IPVS_DEST_ATTR_ADDR_FAMILY, afOf(d.family));
  mnl_attr_put(nlh, IPVS_DEST_ATTR_ADDR, addr.size(), addr.data());
  mnl_attr_put_u16(nlh, IPVS_DEST_ATTR_PORT, htons(d.key.port));
  mnl_attr_put_u32(nlh, IPVS_DEST_ATTR_FWD_METHOD, static_cast<uint32_t>(d.forward));
  mnl_attr_put_u32(nlh, IPVS_DEST_ATTR_WEIGHT, static_cast<uint32_t>(d.weight));
  mnl_attr_put_u8(nlh, IPVS_DEST_ATTR_TUN_TYPE, static_cast<uint8_t>(d.tunnel_type));
  mnl_attr_put_u16(nlh, IPVS_DEST_ATTR_TUN_PORT, htons(d.tunnel_port));
  mnl_attr_put_u16(nlh, IPVS_DEST_ATTR_TUN_FLAGS, d.tunnel_flags);
  mnl_attr_put_u32(nlh, IPVS_DEST_ATTR_U_THRESH, d.upper_threshold);
  mnl_attr_put_u32(nlh, IPVS_DEST_ATTR_L_THRESH, d.lower_threshold);
  mnl_attr_nest_end(nlh, nest);
}

uint32_t wireState(SyncState s) {
  return s == SyncState::kMaster ? IP_VS_STATE_MASTER : IP_VS_STATE_BACKUP;
}

Result<void> checkDaemon(const SyncDaemon& d) {
  const std::string where = describeStart(d);
  if (d.interface.empty()) {
    return fail(ErrorCode::kInvalidArgument, "cannot " + where + ": no multicast interface");
  }
  if (d.interface.size() >= IP_VS_IFNAME_MAXLEN) {
    return fail(ErrorCode::kInvalidArgument,
                "cannot " + where + ": an interface name has at most " +
                    std::to_string(IP_VS_IFNAME_MAXLEN - 1) + " characters");
  }
  if (d.interface.find('\0') != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument, "cannot " + where + ": a NUL in the interface name");
  }
  if (!d.group.isUnspecified() && !d.group.isMulticast()) {
    return fail(ErrorCode::kInvalidArgument,
                "cannot " + where + ": group " + d.group.toString() + " is not multicast");
  }
  return {};
}

}  // namespace

std::vector<uint8_t> encodeGetFamily(uint32_t seq) {
  Builder b(kCtrlFamily, NLM_F_REQUEST | NLM_F_ACK, CTRL_CMD_GETFAMILY, 1, seq);
  mnl_attr_put_strz(b.nlh(), CTRL_ATTR_FAMILY_NAME, IPVS_GENL_NAME);
  return b.bytes();
}

Result<std::vector<uint8_t>> encodeService(uint16_t family_id, uint8_t cmd, const Service& svc,
                                           uint32_t seq) {
  const bool with_settings = cmd == IPVS_CMD_NEW_SERVICE || cmd == IPVS_CMD_SET_SERVICE;
  if (auto r = with_settings ? checkService(svc) : checkKey(svc.key); !r) return fail(r.error());
  Builder b(family_id, NLM_F_REQUEST | NLM_F_ACK, cmd, IPVS_GENL_VERSION, seq);
  putService(b.nlh(), svc, with_settings);
  return b.bytes();
}

Result<std::vector<uint8_t>> encodeDest(uint16_t family_id, uint8_t cmd, const Service& svc,
                                        const Destination& dest, uint32_t seq) {
  if (auto r = checkDest(svc, dest); !r) return fail(r.error());
  Builder b(family_id, NLM_F_REQUEST | NLM_F_ACK, cmd, IPVS_GENL_VERSION, seq);
  putService(b.nlh(), svc, /*with_settings=*/false);
  putDest(b.nlh(), dest);
  return b.bytes();
}

Result<std::vector<uint8_t>> encodeOp(uint16_t family_id, const Op& op, uint32_t seq) {
  switch (op.kind) {
    case Op::Kind::kAddService:
      return encodeService(family_id, IPVS_CMD_NEW_SERVICE, op.service, seq);
    case Op::Kind::kEditService:
      return encodeService(family_id, IPVS_CMD_SET_SERVICE, op.service, seq);
    case Op::Kind::kDelService:
      return encodeService(family_id, IPVS_CMD_DEL_SERVICE, op.service, seq);
    default:
      break;
  }
  if (!op.dest) {
    return fail(ErrorCode::kInvalidArgument,
                op.toString() + ": a destination op without a destination");
  }
  const uint8_t cmd = op.kind == Op::Kind::kAddDest    ? IPVS_CMD_NEW_DEST
                      : op.kind == Op::Kind::kEditDest ? IPVS_CMD_SET_DEST
                                                       : IPVS_CMD_DEL_DEST;
  return encodeDest(family_id, cmd, op.service, *op.dest, seq);
}

std::vector<uint8_t> encodeDumpServices(uint16_t family_id, uint32_t seq) {
  Builder b(family_id, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP, IPVS_CMD_GET_SERVICE,
            IPVS_GENL_VERSION, seq);
  return b.bytes();
}

Result<std::vector<uint8_t>> encodeDumpDests(uint16_t family_id, const ServiceKey& key,
                                             uint32_t seq) {
  if (auto r = checkKey(key); !r) return fail(r.error());
  Builder b(family_id, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP, IPVS_CMD_GET_DEST, IPVS_GENL_VERSION,
            seq);
  putServiceKey(b.nlh(), key);
  return b.bytes();
}

std::vector<uint8_t> encodeGetConfig(uint16_t family_id, uint32_t seq) {
  Builder b(family_id, NLM_F_REQUEST | NLM_F_ACK, IPVS_CMD_GET_CONFIG, IPVS_GENL_VERSION, seq);
  return b.bytes();
}

std::vector<uint8_t> encodeSetConfig(uint16_t family_id, const Timeouts& t, uint32_t seq) {
  Builder b(family_id, NLM_F_REQUEST | NLM_F_ACK, IPVS_CMD_SET_CONFIG, IPVS_GENL_VERSION, seq);
  mnl_attr_put_u32(b.nlh(), IPVS_CMD_ATTR_TIMEOUT_TCP, t.tcp);
  mnl_attr_put_u32(b.nlh(), IPVS_CMD_ATTR_TIMEOUT_TCP_FIN, t.tcpfin);
  mnl_attr_put_u32(b.nlh(), IPVS_CMD_ATTR_TIMEOUT_UDP, t.udp);
  return b.bytes();
}

std::vector<uint8_t> encodeFlush(uint16_t family_id, uint32_t seq) {
  Builder b(family_id, NLM_F_REQUEST | NLM_F_ACK, IPVS_CMD_FLUSH, IPVS_GENL_VERSION, seq);
  return b.bytes();
}

Result<std::vector<uint8_t>> encodeStartDaemon(uint16_t family_id, const SyncDaemon& d,
                                               uint32_t seq) {
  if (auto r = checkDaemon(d); !r) return fail(r.error());
  Builder b(family_id, NLM_F_REQUEST | NLM_F_ACK, IPVS_CMD_NEW_DAEMON, IPVS_GENL_VERSION, seq);
  nlmsghdr* nlh = b.nlh();
  nlattr* nest = mnl_attr_nest_start(nlh, IPVS_CMD_ATTR_DAEMON);
  mnl_attr_put_u32(nlh, IPVS_DAEMON_ATTR_STATE, wireState(d.state));
  mnl_attr_put_strz(nlh, IPVS_DAEMON_ATTR_MCAST_IFN, d.interface.c_str());
  mnl_attr_put_u32(nlh, IPVS_DAEMON_ATTR_SYNC_ID, d.sync_id);
  if (d.max_len != 0) mnl_attr_put_u16(nlh, IPVS_DAEMON_ATTR_SYNC_MAXLEN, d.max_len);
  // Host order, unlike every other port of the family: the kernel reads it with nla_get_u16()
  // and converts it itself (proved in the VM: a be16 8850 made the backup bind port 37410).
  if (d.port != 0) mnl_attr_put_u16(nlh, IPVS_DAEMON_ATTR_MCAST_PORT, d.port);
  if (d.ttl != 0) mnl_attr_put_u8(nlh, IPVS_DAEMON_ATTR_MCAST_TTL, d.ttl);
  if (!d.group.isUnspecified()) {
    if (d.group.family == Family::kInet) {
      mnl_attr_put(nlh, IPVS_DAEMON_ATTR_MCAST_GROUP, 4, d.group.bytes.data());
    } else {
      mnl_attr_put(nlh, IPVS_DAEMON_ATTR_MCAST_GROUP6, 16, d.group.bytes.data());
    }
  }
  mnl_attr_nest_end(nlh, nest);
  return b.bytes();
}

std::vector<uint8_t> encodeStopDaemon(uint16_t family_id, SyncState state, uint32_t seq) {
  Builder b(family_id, NLM_F_REQUEST | NLM_F_ACK, IPVS_CMD_DEL_DAEMON, IPVS_GENL_VERSION, seq);
  nlattr* nest = mnl_attr_nest_start(b.nlh(), IPVS_CMD_ATTR_DAEMON);
  mnl_attr_put_u32(b.nlh(), IPVS_DAEMON_ATTR_STATE, wireState(state));
  mnl_attr_nest_end(b.nlh(), nest);
  return b.bytes();
}

std::vector<uint8_t> encodeDumpDaemons(uint16_t family_id, uint32_t seq) {
  Builder b(family_id, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP, IPVS_CMD_GET_DAEMON,
            IPVS_GENL_VERSION, seq);
  return b.bytes();
}

std::string describeStart(const SyncDaemon& d) {
  return "start the IPVS sync " + syncStateName(d.state) + " daemon on " +
         (d.interface.empty() ? std::string("no interface") : d.interface) + " (sync id " +
         std::to_string(d.sync_id) + ")";
}

std::string describeStop(SyncState state) {
  return "stop the IPVS sync " + syncStateName(state) + " daemon";
}

Error ackError(int err, std::string_view what, std::string_view kernel_message) {
  return netlink::ackError(err, what, kernel_message,
                           {{EEXIST, ErrorCode::kAlreadyExists},
                            {ENOENT, ErrorCode::kNotFound},
                            {ESRCH, ErrorCode::kNotFound}});
}

Error opError(const Op& op, int err, std::string_view kernel_message) {
  Error e = ackError(err, "cannot " + describe(op), kernel_message);
  const bool service_settings =
      op.kind == Op::Kind::kAddService || op.kind == Op::Kind::kEditService;
  if (service_settings && err == ENOENT) {
    e.code = ErrorCode::kInvalidArgument;
    e.message += ": this kernel has no scheduler \"" + op.service.scheduler + "\"";
    if (!op.service.pe_name.empty()) {
      e.message += " or no persistence engine \"" + op.service.pe_name + "\"";
    }
    e.message += " (modprobe ip_vs_" + op.service.scheduler + ")";
  }
  return e;
}

std::string describe(const Op& op) {
  const std::string svc = "service " + op.service.key.toString();
  const std::string dst = op.dest ? "destination " + destText(*op.dest) + " of " + svc : svc;
  switch (op.kind) {
    case Op::Kind::kAddService:
      return "add " + svc;
    case Op::Kind::kEditService:
      return "edit " + svc;
    case Op::Kind::kDelService:
      return "delete " + svc;
    case Op::Kind::kAddDest:
      return "add " + dst;
    case Op::Kind::kEditDest:
      return "edit " + dst;
    case Op::Kind::kDelDest:
      return "delete " + dst;
  }
  return "change " + svc;
}

}  // namespace tandem::resources::ipvs::codec
