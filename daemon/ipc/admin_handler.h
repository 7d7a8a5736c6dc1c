#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/result.h"
#include "ipc/protocol.h"

namespace tandem::ipc {

// What tandemd does for an admin request, implemented by the daemon. The IPC layer has
// already decoded the request, checked its fields and authorised the caller; each method runs
// on the event loop and must not block. A returned object's fields are added to {"ok": true};
// an error becomes {"ok": false, "error": message, "code": ...}, so the message should say
// what went wrong and what the operator can do about it.
class AdminHandler {
 public:
  virtual ~AdminHandler() = default;

  // The fields of the status schema in protocol.h.
  virtual nlohmann::json status() = 0;
  [[nodiscard]] virtual Result<nlohmann::json> standby(const StandbyArgs& args) = 0;
  [[nodiscard]] virtual Result<nlohmann::json> move(const MoveArgs& args) = 0;
  // Cluster wide: while on, no node starts or stops resources (election/cluster_core.h).
  [[nodiscard]] virtual Result<nlohmann::json> maintenance(bool on) {
    (void)on;
    return fail(ErrorCode::kUnavailable, "this tandemd has no cluster to put in maintenance");
  }
  // Clears failures (resource, fence) and a pending operator move.
  [[nodiscard]] virtual Result<nlohmann::json> clear() = 0;
  [[nodiscard]] virtual Result<nlohmann::json> reload() = 0;
  // The fields of the ipvs schema in protocol.h. A handler without IPVS says so.
  [[nodiscard]] virtual Result<nlohmann::json> ipvs() {
    return fail(ErrorCode::kUnavailable, "this tandemd does not manage IPVS");
  }
  // What a reload would change (config-diff in protocol.h); nothing is applied.
  [[nodiscard]] virtual Result<nlohmann::json> configDiff() {
    return fail(ErrorCode::kUnavailable, "this tandemd cannot compare its config");
  }
  // The running config as read (config-show in protocol.h).
  [[nodiscard]] virtual Result<nlohmann::json> configShow() {
    return fail(ErrorCode::kUnavailable, "this tandemd cannot show its config");
  }
  // drain in protocol.h: a real server held at weight 0 cluster wide, or given back.
  [[nodiscard]] virtual Result<nlohmann::json> drain(const DrainArgs& args) {
    (void)args;
    return fail(ErrorCode::kUnavailable, "this tandemd has no cluster to drain real servers in");
  }
  // drains in protocol.h.
  [[nodiscard]] virtual Result<nlohmann::json> drains() {
    return fail(ErrorCode::kUnavailable, "this tandemd has no cluster to drain real servers in");
  }
  // explain in protocol.h.
  [[nodiscard]] virtual Result<nlohmann::json> explain() {
    return fail(ErrorCode::kUnavailable, "this tandemd cannot explain its election");
  }
  // The history (history in protocol.h): what happened at or after since_ms (wall clock).
  [[nodiscard]] virtual Result<nlohmann::json> history(uint64_t since_ms) {
    (void)since_ms;
    return fail(ErrorCode::kUnavailable, "this tandemd keeps no history");
  }
  // Told after each request that changes the cluster (RequestDecl::changes), with who asked
  // ("uid=0 pid=4242"), the body and the result ("ok" or the error): the admin actions of the
  // history. The audit log line has already been written.
  virtual void audited(const std::string& request, const std::string& who, const std::string& body,
                       const std::string& result) {
    (void)request;
    (void)who;
    (void)body;
    (void)result;
  }
  // The fields of the sync schema in protocol.h.
  [[nodiscard]] virtual Result<nlohmann::json> sync() {
    return fail(ErrorCode::kUnavailable, "this tandemd does not run connection sync");
  }
};

}  // namespace tandem::ipc
