#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "ipc/access.h"
#include "ipc/admin_handler.h"
#include "ipc/protocol.h"

namespace tandem::ipc {

// One line per refused, malformed or state-changing request, with key=value context
// (request=standby uid=1000 pid=4242 ...): who changed the cluster is worth a log line.
using AuditLog = std::function<void(std::string_view line)>;
using AdminClock = std::function<std::chrono::steady_clock::time_point()>;

// What the channel has seen since tandemd started; the status answer carries it.
struct AdminCounters {
  uint64_t malformed = 0;  // undecodable, oversized or unknown requests
  uint64_t refused = 0;    // changes asked by a user who may not change anything
  uint64_t changes = 0;    // changes carried out (whatever their result)
};

// How many malformed or refused requests are logged one by one in each window; past that they
// are counted, and one line says how many went unlogged when the next window opens. A local
// user flooding the channel cannot flood the journal.
inline constexpr size_t kNoiseLogBurst = 5;
inline constexpr std::chrono::seconds kNoiseLogWindow{10};

// The admin protocol's logic, without libqb: request bytes and the caller's identity in,
// response bytes out. Decoding, authorisation and dispatch to the handler all happen here, so
// every path (garbage, refusal, a handler that throws) is unit-tested without a socket.
class AdminService {
 public:
  // clock: for the log's rate limit (without one, every line is logged).
  AdminService(AdminHandler& handler, AccessPolicy policy, AuditLog audit = {},
               AdminClock clock = {});

  // Always returns a response, whatever the bytes were; never throws.
  Bytes handle(std::span<const uint8_t> request, Peer& peer);

  const AccessPolicy& policy() const { return policy_; }
  // A reload changed [control] group.
  void setPolicy(AccessPolicy policy) { policy_ = std::move(policy); }
  // For the transport's own events (a lost response).
  void audit(const std::string& line) const;
  // For noise anyone can make (a malformed request, a refused change or connection): rate
  // limited, see kNoiseLogBurst.
  void auditNoise(const std::string& line);
  const AdminCounters& counters() const { return counters_; }

 private:
  nlohmann::json answer(const Request& request, Peer& peer);
  nlohmann::json dispatch(const Request& request);

  nlohmann::json malformed(const Error& error, const Peer& peer);

  AdminHandler& handler_;
  AccessPolicy policy_;
  AuditLog audit_;
  AdminClock clock_;
  AdminCounters counters_;
  std::chrono::steady_clock::time_point window_start_{};
  size_t window_lines_ = 0;
  uint64_t unlogged_ = 0;
};

}  // namespace tandem::ipc
