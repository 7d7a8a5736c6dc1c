#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

// The admin protocol between `tandem` and tandemd, carried by libqb IPC (ipc_server.h). Pure:
// these functions turn values into bytes and back and never touch a socket.
//
// A request is a qb_ipc_request_header followed by a UTF-8 JSON object:
//
//   offset  0  int32 id      what is asked (RequestId below)
//   offset  8  int32 size    header + body, in bytes (libqb aligns each field to 8)
//   offset 16  body          e.g. {"node": "lb1", "on": true}
//
// A response is a qb_ipc_response_header followed by a JSON object:
//
//   offset  0  int32 id      the id of the request it answers
//   offset  8  int32 size    header + body, in bytes
//   offset 16  int32 error   0, or a negative errno summarising a failure (the body says more)
//   offset 24  body          {"ok": true, ...} or {"ok": false, "error": "...", "code": "..."}
//
// "error" says what went wrong and what to do about it; "code" is an errorCodeName() (e.g.
// "permission-denied") for scripts. Both peers run on one host, so integers are host order.
//
// Requests and their bodies:
//   1 status   {}                            read-only; allowed to every local user
//   2 standby  {"node": NAME, "on": BOOL}    the rest change state: root or control.group only
//              optional "lifetime_ms": the standby ends by itself after it (with "on": true)
//   3 move     {"target": NAME}               optional "lifetime_ms", as for standby
//   4 clear    {}                            clear failures and an operator's move
//   5 reload   {}                            re-read the config, as SIGHUP does
//   6 drain    {"service": TEXT, "server": TEXT, "on": BOOL}  a real server's weight held at 0
//              cluster wide (on), or given back (off); the service as `ipvs show` keys it
//              ("tcp 198.51.100.50:80", "fwmark 7"), as ADDR:PORT, or by its name; the
//              server as ADDR:PORT or ADDR
//   7 ipvs     {}                            read-only, like status: the IPVS table
//   8 sync     {}                            read-only, like status: connection sync
//   9 maintenance {"on": BOOL}               cluster wide: no node starts or stops resources
//  10 config-diff {}    what a reload of the file would change, changing nothing; root or
//                       control.group (it reads the file as tandemd)
//  11 config-show {}    the running config as it was read, and whether the file differs now;
//                       root or control.group, as config-diff
//  12 history {"since_ms": UNSIGNED, optional}  what happened (below); root or control.group:
//                       its admin actions say who asked (uid, pid), as the audit log does
//  13 explain {}        read-only: why the ACTIVE is active, what happens if it fails (below)
//  14 drains {}         read-only: the drained real servers and how far each has come (below)
// A "lifetime_ms" is an integer from kMinLifetimeMs to kMaxLifetimeMs.
// A request over kMaxRequestSize (4 KiB) is refused before its body is read, and a change is
// authorised from the header's id before the body is parsed: what an unprivileged user sends
// for a change is never parsed at all.
// Unknown fields are refused, so a typo ("nod") is an error instead of a silent default. A body
// holding a NUL byte is refused too: JSON text has none, and libqb hands the server the size
// the header claims, so an overstated size shows up as the receive buffer's zeros.
//
// The status response (besides "ok": true):
//   "cluster":         string, the cluster name
//   "local_node":      string, the node that answered
//   "role":            string, its internal role (INIT, BACKUP, ACTIVE, FENCING, ...)
//   "active":          string or null, who this node believes holds the VIPs
//   "quorate":         bool, or null while votequorum has not answered (then it is not ACTIVE)
//   "quorum_held_ms":  int or null: "quorate" is votequorum's last answer, held since its
//                      connection was lost this long ago (for cluster.quorum_hold); optional
//   "epoch":           unsigned, bumped by each takeover
//   "move_target":     string, an operator's pending move ("" when none); optional
//   "failback_waiting": string, what a failback held back for connection sync waits for ("")
//   "maintenance":     bool, maintenance mode is on (cluster wide: the same on every node)
//   "standby_left_ms": int or null, what this node's standby with a lifetime has left
//   "move_left_ms":    int or null, what the move in force has left of its lifetime
//   "nodes":           [{"name": string, "role": string, "priority": int,
//                        "health": int (per-mille), "standby": bool,
//                        "last_heartbeat_ms": int or null (null for self and never-heard),
//                        "connections": unsigned, "sync_backup_ms": unsigned,
//                        "templates": unsigned, "sync_heard_ms": int or null (how long ago its
//                        backup daemon last heard a sync message; null: never) (its heartbeats)}]
//   "accepted_frames": unsigned, heartbeat frames accepted
//   "rejected_frames": {reason: count}, reason as wire::name(Rejection) (e.g. "bad_signature")
//   "admin_requests":  {"malformed": unsigned, "refused": unsigned, "changes": unsigned}, what
//                      this admin channel has seen since tandemd started
//   "routes":          route health injection (the route subsystem); absent or null when no
//                      virtual server has a route: {"mode": "active-backup"|"active-active",
//                      "table": unsigned, "protocol": unsigned, "interface": string or null
//                      (blackholes), "own_interface": bool (tandemd created it),
//                      "metric": unsigned, "error": string (optional: the
//                      interface is unusable), "services": [{"service": string, "route":
//                      string (a /32 or /128), "held": bool, "reason": string, "withdrawals",
//                      "repairs", "absorbed_flaps": unsigned, "error": string (optional: the
//                      last add or remove failed)}]}
//
// The sync response (besides "ok": true): the "sync" object of the status (enabled, interface,
// sync_id, group, port, connections and templates (this director's table), restarts, error,
// "daemons": [{"state": "backup"|"master", "wanted", "running", and while running "interface",
// "sync_id", "group", "port", "ttl", "max_message_length", "since_ms"}]), plus
// "failback_waiting" and "nodes": [{"name", "role", "connections", "sync_backup_ms",
// "templates", "sync_heard_ms"}] as the status has them.
//
// The ipvs response (besides "ok": true): the kernel's IPVS table in this director's network
// namespace, dumped when asked, with what tandem knows of each entry. Kept on every director,
// ACTIVE or not.
//   "in_sync":             bool, the last reconcile pass left the table as configured
//   "monitor_interval_ms": unsigned, how often the table is compared and repaired
//   "services": [{
//     "name":      string or null (null: a service tandem does not manage)
//     "key":       string, "tcp 198.51.100.50:80", "fwmark 7 (IPv4)"
//     "protocol":  "tcp" | "udp" | "sctp" | null (fwmark)
//     "address":   string or null (fwmark);  "port": unsigned;  "fwmark": unsigned or null
//     "family":    "ipv4" | "ipv6"
//     "scheduler": string;  "flags": [string] ("persistent", "one-packet", "fallback", "port")
//     "persistence_timeout_s": unsigned (0: not persistent)
//     "managed":   bool, configured in tandem.conf
//     "conns", "cps", "in_pps", "out_pps", "in_bps", "out_bps": unsigned (kernel counters and
//       rates, the rates as the kernel's 2-second estimator has them)
//     "destinations": [{
//       "address": string;  "port": unsigned;  "forward": "nat" | "dr" | "tun" | "local"
//       "weight": int;  "upper_threshold", "lower_threshold": unsigned
//       "health":  "up" (no check configured: always up) | "unknown" (checks not run yet) |
//                  "down" | "fallback" (the sorry server) | null (not managed)
//       "drained": bool, `tandem real drain` holds it at weight 0
//       "active_conns", "inactive_conns", "persistent_conns": unsigned
//       "conns", "cps", "in_pps", "out_pps", "in_bps", "out_bps": unsigned }] }]
// A tandemd with no [[virtual_server]], or on a kernel without IPVS, answers "unavailable".
//
// The config-diff response (besides "ok": true), and the reload response with the same fields
// for what was applied:
//   "file": string;  "generation": unsigned, the running config's (reload: after it)
//   "accepted": bool, a reload applies it (false: "refused" says why, and nothing changes)
//   "refused": [{"key", "running", "next", "why", "message"}], keys that cannot change live
//   "changes": [{"section": string, "details": [string]}], in the order a reload applies them
//              (cluster, nodes, vips, virtual_servers, sync, ipvs, control, daemon); keys
//              appear by id only. Empty: the file says what is running.
// A file that does not load fails with invalid-argument, its first diagnostics in the message.
// The config-show response: "file", "generation", "text" (the running config as it was read)
// and "file_changed": bool, the file now differs from it (`tandem config diff` says how).
//
// The history response: "node": string, "capacity": unsigned (the oldest go beyond it), and
// "entries": [{"at_ms": unsigned (wall clock), "kind": "start" | "role" | "takeover" |
// "real-server" | "admin", "what": string, "reason": string ("" when none), "duration_ms":
// int or null (a takeover's, TAKING_OVER to ACTIVE)}], oldest first, those at or after
// since_ms. Kept in STATE_DIR/history across restarts of tandemd.
//
// The explain response, from the answering node's view: "node", "active": string or null,
// "why_active": string, "candidates": [{"name", "eligible": bool, "why_not": string}] (every
// node, lost ones included), "successor": string or null (who takes over if the ACTIVE fails
// now), "if_active_fails": string, "maintenance": bool.
//
// The drain response: "service" (its key), "name" (the [[virtual_server]], or null), "server",
// "drained": bool (what it is now), "changed": bool (false: it already was), "generation".
// The drains response: "generation" (0: never set), "drains": [{"service", "name", "server",
// "configured": bool (the running config has that real server in that service)}], "nodes":
// [{"name", "role", "report_age_ms": int or null (null: the answering node, now), "progress":
// [{"service", "server", "active_conns": int or null, "templates": int or null}]}], the
// answering node first. A count is null until a dump of that node's table shows the server at
// weight 0; the connections are where the ACTIVE is, the BACKUPs' counts are their synced
// copies.
// New fields may be added; readers ignore what they do not know.
namespace tandem::ipc {

// The largest request or response, header included. libqb sizes its buffers from it. Over
// QB_IPC_SOCKET one message is one datagram, which the kernel also caps at net.core.wmem_max;
// a status is a few KiB, far below either.
inline constexpr size_t kMaxMessageSize = size_t{1024} * 1024;
// The largest request, header included. Every request body is a few names and flags; anything
// bigger is refused unread, before its JSON is parsed.
inline constexpr size_t kMaxRequestSize = 4096;
inline constexpr std::string_view kDefaultIpcName = "tandem";
// A standby's or a move's lifetime: from a second to 7 days. Longer is "until cleared"; the
// timer behind it and the heartbeat's 32-bit field would hold up to 24 days.
inline constexpr uint64_t kMinLifetimeMs = 1000;
inline constexpr uint64_t kMaxLifetimeMs = uint64_t{7} * 24 * 3600 * 1000;

inline constexpr size_t kRequestHeaderSize = 16;   // sizeof(qb_ipc_request_header)
inline constexpr size_t kResponseHeaderSize = 24;  // sizeof(qb_ipc_response_header)

enum class RequestId : int32_t {
  kStatus = 1,
  kStandby = 2,
  kMove = 3,
  kClear = 4,
  kReload = 5,
  kDrain = 6,
  kIpvs = 7,
  kSync = 8,
  kMaintenance = 9,
  kConfigDiff = 10,
  kConfigShow = 11,
  kHistory = 12,
  kExplain = 13,
  kDrains = 14,
};

// Who may send a request: any local user, or only root and the members of control.group.
enum class Access { kAnyone, kControlGroup };

// Each request, declared once (protocol.cpp's table). What follows from it:
//   - the wire: requestIdFromWire() knows exactly the declared ids, and an unknown one is
//     answered with the declared list;
//   - the authorisation from the header (access.cpp), before the body is parsed;
//   - the audit: every control.group request is logged with who asked; one that `changes` the
//     cluster is also counted, and recorded in the history and the journal;
//   - the CLI: `cli` is the `tandem` command that sends it. test/cli/docs_test checks that each
//     is a command of `tandem`, and so in tandem.8 and in the completion.
struct RequestDecl {
  RequestId id;
  std::string_view name;  // "status", "standby", ... for messages and logs
  Access access;
  bool changes;           // changes the cluster (a control.group read does not)
  std::string_view cli;   // the `tandem` command, e.g. "node standby"
  std::string_view help;  // one line: what it asks
};

// Every request, in id order.
std::span<const RequestDecl> requestDecls();
const RequestDecl& declarationOf(RequestId id);
std::string_view requestName(RequestId id);
std::optional<RequestId> requestIdFromWire(int32_t raw);
// Only root and control.group may send it: every change, and the reads of the config file and of
// the history (which says who asked what).
bool needsControlGroup(RequestId id);

using Bytes = std::vector<uint8_t>;

struct Request {
  RequestId id = RequestId::kStatus;
  nlohmann::json body = nlohmann::json::object();
};

[[nodiscard]] Result<Bytes> encodeRequest(RequestId id, const nlohmann::json& body);
// Checks the header, the size and the body (a JSON object); the typed parsers below check the
// fields. Never throws.
[[nodiscard]] Result<Request> decodeRequest(std::span<const uint8_t> bytes);
// The id field of whatever arrived, so even a malformed request gets an answer it can match;
// 0 when the bytes are too short to hold one.
int32_t rawRequestId(std::span<const uint8_t> bytes);

// The error field is derived from the body: 0 when "ok" is true, else the errno of its "code".
// Fails (never throws) when the body would not fit in kMaxMessageSize.
[[nodiscard]] Result<Bytes> encodeResponse(int32_t id, const nlohmann::json& body);
// Checks the header, that it answers expected_id, and that the body is an object with a
// boolean "ok" (and a string "error" when "ok" is false). Returns the body as sent.
[[nodiscard]] Result<nlohmann::json> decodeResponse(std::span<const uint8_t> bytes,
                                                    int32_t expected_id);

// {"ok": true} plus the fields of extra (an object; anything else is ignored).
nlohmann::json okBody(const nlohmann::json& extra = nlohmann::json::object());
// {"ok": false, "error": message, "code": errorCodeName(code)}
nlohmann::json errorBody(const Error& error);
// A decoded response body as a Result: the body itself when "ok" is true, else its error,
// with the code read back from "code" (kInternal when absent or unknown).
[[nodiscard]] Result<nlohmann::json> bodyResult(const nlohmann::json& body);

ErrorCode errorCodeFromName(std::string_view name);

struct StandbyArgs {
  std::string node;
  bool on = true;
  std::optional<uint64_t> lifetime_ms;  // only with on
};
struct MoveArgs {
  std::string target;
  std::optional<uint64_t> lifetime_ms;
};
struct MaintenanceArgs {
  bool on = true;
};
struct DrainArgs {
  std::string service;
  std::string server;
  bool on = true;
};

nlohmann::json standbyBody(const StandbyArgs& args);
nlohmann::json moveBody(const MoveArgs& args);
nlohmann::json maintenanceBody(const MaintenanceArgs& args);
nlohmann::json drainBody(const DrainArgs& args);

[[nodiscard]] Result<StandbyArgs> parseStandbyArgs(const nlohmann::json& body);
[[nodiscard]] Result<MoveArgs> parseMoveArgs(const nlohmann::json& body);
[[nodiscard]] Result<MaintenanceArgs> parseMaintenanceArgs(const nlohmann::json& body);
[[nodiscard]] Result<DrainArgs> parseDrainArgs(const nlohmann::json& body);
// {"since_ms": N} or {}: 0 when absent (everything kept).
[[nodiscard]] Result<uint64_t> parseHistoryArgs(const nlohmann::json& body);
// status, clear, reload, ipvs, sync, config-diff, config-show, explain and drains take no
// fields.
[[nodiscard]] Result<void> parseNoArgs(RequestId id, const nlohmann::json& body);

}  // namespace tandem::ipc
