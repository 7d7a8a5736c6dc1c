#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "ipvs/ipvs_model.h"

// The generic netlink messages tandem sends and reads to program IPVS, as byte buffers. Pure:
// no socket, no clock; the socket shell (ipvs_netlink.h) only moves these bytes.
//
// Every message is one netlink message with a generic netlink header (pid 0: the kernel fills
// in the sender):
//
//   struct nlmsghdr     len u32 | type u16 | flags u16 | seq u32 | pid u32      16 bytes
//   struct genlmsghdr   cmd u8 | version u8 | reserved u16                      4 bytes
//   attributes          len u16 | type u16 | payload, padded to 4; nested ones carry
//                       NLA_F_NESTED in their type, as ipvsadm (libnl) sends them
//
//   type nlctrl (0x10)  CTRL_CMD_GETFAMILY v1, CTRL_ATTR_FAMILY_NAME "IPVS"   -> the family id
//   type IPVS (dynamic, resolved at open), version IPVS_GENL_VERSION:
//     NEW/SET/DEL_SERVICE   REQUEST|ACK  IPVS_CMD_ATTR_SERVICE { AF, PROTOCOL, ADDR (16 bytes),
//                           PORT (be16) | AF, FWMARK; SCHED_NAME, [PE_NAME,] FLAGS {flags, mask
//                           ~0}, TIMEOUT, NETMASK }
//     NEW/SET/DEL_DEST      REQUEST|ACK  SERVICE { the key }, DEST { ADDR, PORT, FWD_METHOD,
//                           WEIGHT, TUN_TYPE, TUN_PORT, TUN_FLAGS, U_THRESH, L_THRESH,
//                           ADDR_FAMILY }
//     GET_SERVICE           REQUEST|DUMP                 -> NEW_SERVICE per service, DONE
//     GET_DEST              REQUEST|DUMP  SERVICE {key}  -> NEW_DEST per destination, DONE
//     GET_CONFIG            REQUEST|ACK                  -> SET_CONFIG { TIMEOUT_TCP,
//                                                           TIMEOUT_TCP_FIN, TIMEOUT_UDP }
//     SET_CONFIG            REQUEST|ACK  TIMEOUT_TCP, TIMEOUT_TCP_FIN, TIMEOUT_UDP
//     FLUSH                 REQUEST|ACK  (tests only)
//     NEW_DAEMON            REQUEST|ACK  IPVS_CMD_ATTR_DAEMON { STATE u32, MCAST_IFN string,
//                           SYNC_ID u32, and only when set: SYNC_MAXLEN u16, MCAST_PORT u16 in
//                           HOST order (not be16, unlike every other port here), MCAST_TTL u8,
//                           MCAST_GROUP (4 bytes, network order) | MCAST_GROUP6 (16 bytes) }
//     DEL_DAEMON            REQUEST|ACK  DAEMON { STATE } (ipvsadm adds an empty MCAST_IFN and
//                           SYNC_ID 0, which the kernel does not read)
//     GET_DAEMON            REQUEST|DUMP                 -> NEW_DAEMON { every attribute } per
//                                                           running daemon, DONE
//
// The attribute order, flags and sizes are those of ipvsadm 1.31 (libipvs over libnl), so the
// golden tests compare byte for byte with what ipvsadm sends.
//
// Two normalisations keep a dumped table equal to the table that was applied:
// - IP_VS_SVC_F_HASHED is kernel bookkeeping (set on every service in the table); it is
//   never sent and is dropped when decoding.
// - A netmask of 0 means the full mask (IPv4 255.255.255.255, IPv6 /128), which is what the
//   kernel needs for a service that is not persistent (an IPv6 service with netmask 0 is
//   refused); 0 is sent as the full mask and the full mask decodes as 0.
namespace tandem::resources::ipvs::codec {

// The generic netlink controller's fixed id (GENL_ID_CTRL).
constexpr uint16_t kCtrlFamily = 0x10;

std::vector<uint8_t> encodeGetFamily(uint32_t seq);

// Requests to change the table; bad input (an unknown protocol, a negative weight, a scheduler
// name longer than the kernel takes) is a kInvalidArgument naming the service or destination.
Result<std::vector<uint8_t>> encodeService(uint16_t family_id, uint8_t cmd, const Service& svc,
                                           uint32_t seq);
Result<std::vector<uint8_t>> encodeDest(uint16_t family_id, uint8_t cmd, const Service& svc,
                                        const Destination& dest, uint32_t seq);
// The request that carries out one planner op.
Result<std::vector<uint8_t>> encodeOp(uint16_t family_id, const Op& op, uint32_t seq);

std::vector<uint8_t> encodeDumpServices(uint16_t family_id, uint32_t seq);
Result<std::vector<uint8_t>> encodeDumpDests(uint16_t family_id, const ServiceKey& key,
                                             uint32_t seq);
std::vector<uint8_t> encodeGetConfig(uint16_t family_id, uint32_t seq);
std::vector<uint8_t> encodeSetConfig(uint16_t family_id, const Timeouts& t, uint32_t seq);
std::vector<uint8_t> encodeFlush(uint16_t family_id, uint32_t seq);

// The connection-sync daemons. A daemon the kernel would refuse for its form (no interface, a
// name longer than IP_VS_IFNAME_MAXLEN - 1, a group that is not multicast) is a
// kInvalidArgument naming the daemon, before anything is sent.
Result<std::vector<uint8_t>> encodeStartDaemon(uint16_t family_id, const SyncDaemon& d,
                                               uint32_t seq);
std::vector<uint8_t> encodeStopDaemon(uint16_t family_id, SyncState state, uint32_t seq);
std::vector<uint8_t> encodeDumpDaemons(uint16_t family_id, uint32_t seq);
// "start the IPVS sync master daemon on eth1 (sync id 7)", "stop the IPVS sync backup daemon":
// what a request asks, for its errors.
std::string describeStart(const SyncDaemon& d);
std::string describeStop(SyncState state);

struct Message {
  enum class Kind { kFamily, kService, kDest, kConfig, kDaemon, kAck, kDone, kOther };
  Kind kind = Kind::kOther;
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t seq = 0;
  uint32_t pid = 0;
  uint8_t cmd = 0;                // the generic netlink command, for IPVS and nlctrl messages
  uint16_t family_id = 0;         // kFamily: CTRL_ATTR_FAMILY_ID
  ServiceState service;           // kService
  DestinationState dest;          // kDest
  Timeouts timeouts;              // kConfig
  SyncDaemon daemon;              // kDaemon
  int error = 0;                  // kAck/kDone: a positive errno, 0 for success
  std::string kernel_message;     // kAck: the extended ack's text, if the kernel gave one
  bool dump_interrupted = false;  // NLM_F_DUMP_INTR: the table changed during the dump
};

// Splits one received buffer into its messages; family_id tells IPVS messages apart (0 while
// it is not known yet: only nlctrl, acks and dump ends are read then). A truncated or
// malformed message is a kParse error naming where (the buffer is not trusted).
Result<std::vector<Message>> decode(std::span<const uint8_t> bytes, uint16_t family_id);

// The error for a failed request: EEXIST -> kAlreadyExists, ENOENT/ESRCH -> kNotFound (the
// reconciler re-dumps and re-plans on those), the message naming what was being done, the
// kernel's reason and its own words.
Error ackError(int err, std::string_view what, std::string_view kernel_message);

// ackError for a failed op. ENOENT from NEW_SERVICE/SET_SERVICE means the kernel has no such
// scheduler or persistence engine, not a missing entry: kInvalidArgument, with the module to
// load, so that the reconciler does not re-plan it forever.
Error opError(const Op& op, int err, std::string_view kernel_message);

// "add service tcp 198.51.100.10:80", "delete destination 203.0.113.20:8080 of tcp ...": what
// an op does, for error messages.
std::string describe(const Op& op);

}  // namespace tandem::resources::ipvs::codec
