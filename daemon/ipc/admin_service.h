#pragma once

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

// The admin protocol's logic, without libqb: request bytes and the caller's identity in,
// response bytes out. Decoding, authorisation and dispatch to the handler all happen here, so
// every path (garbage, refusal, a handler that throws) is unit-tested without a socket.
class AdminService {
 public:
  AdminService(AdminHandler& handler, AccessPolicy policy, AuditLog audit = {});

  // Always returns a response, whatever the bytes were; never throws.
  Bytes handle(std::span<const uint8_t> request, Peer& peer);

  const AccessPolicy& policy() const { return policy_; }
  // A reload changed [control] group.
  void setPolicy(AccessPolicy policy) { policy_ = std::move(policy); }
  // For the transport's own events (a refused connection, a lost response).
  void audit(const std::string& line) const;

 private:
  nlohmann::json answer(const Request& request, Peer& peer);
  nlohmann::json dispatch(const Request& request);

  AdminHandler& handler_;
  AccessPolicy policy_;
  AuditLog audit_;
};

}  // namespace tandem::ipc
