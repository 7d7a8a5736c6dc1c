#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "format_status.h"
#include "ipc/protocol.h"

// The commands that change the cluster, crm-style:
//   tandem resource move NODE [--lifetime D]  the services go to NODE (a planned handover) and
//                                             stay there (for D at most)
//   tandem resource clear         drop the operator's move and any failure
//   tandem node standby [NODE] [--lifetime D]  NODE (default: this one) gives up the services
//                                             and takes none (for D at most)
//   tandem node online [NODE]     NODE takes part in the election again
//   tandem maintenance on|off     cluster wide: nothing is started or stopped while on
// Pure: the daemon is a function handed in, so what is asked, in what order, and what is
// printed are tested without one (test/cli/golden/admin).
namespace tandem::cli {

enum class AdminAction { kMove, kClear, kStandby, kOnline, kMaintenanceOn, kMaintenanceOff };

struct AdminCall {
  AdminAction action = AdminAction::kClear;
  std::optional<std::string> node;  // move: required; standby/online: optional; others: none
  // move and standby: "10m", "1h30m" (common/duration.h), from 1s to 7 days.
  std::optional<std::string> lifetime;
};

// "resource move", "resource clear", "node standby", "node online", "maintenance on", ...
std::string_view commandName(AdminAction action);

// One request to tandemd and its answer (ipc_client.h's callDaemon in the binary).
using DaemonCall = std::function<Result<nlohmann::json>(ipc::RequestId, const nlohmann::json&)>;

// A --lifetime value in ms, within the protocol's range, or invalid-argument saying it.
[[nodiscard]] Result<uint64_t> lifetimeMs(const std::string& text);

// The names in a status document's "nodes", in its order.
std::vector<std::string> nodeNames(const nlohmann::json& status);

// invalid-argument naming the nodes that exist when node is not one of them. A status without
// a node list cannot tell, and lets tandemd judge.
[[nodiscard]] Result<void> checkNode(const nlohmann::json& status, const std::string& node);

// Asks for the status first (except for clear): a misspelt node is refused with the list of
// real ones and nothing changes, and standby/online without a node mean the node that answers
// (the protocol wants a name). Then sends the change. The value is tandemd's answer
// to the change (which may be {"ok": false, ...}); a failure means no answer or a bad name.
[[nodiscard]] Result<nlohmann::json> runAdmin(const AdminCall& call, const DaemonCall& daemon);

// What the command prints: a sentence saying what tandemd accepted, or with --json its answer
// pretty-printed; failures to stderr (with --json, as a JSON object on stdout), exit codes as
// in commands.h.
CommandOutput renderAdmin(const AdminCall& call, const Result<nlohmann::json>& answer, bool json);

}  // namespace tandem::cli
