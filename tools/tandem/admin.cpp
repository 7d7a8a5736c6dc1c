#include "admin.h"

#include <algorithm>
#include <utility>

#include "commands.h"
#include "common/duration.h"
#include "common/text.h"

namespace tandem::cli {

namespace {

using nlohmann::json;

// A field of tandemd's answer, or what was asked when the answer lacks it.
std::string answered(const json& body, const char* key, const std::string& fallback) {
  auto it = body.find(key);
  if (it != body.end() && it->is_string()) return it->get<std::string>();
  return fallback;
}

std::string successText(const AdminCall& call, const json& body) {
  const std::string node = call.node.value_or("");
  switch (call.action) {
    case AdminAction::kMove: {
      std::string target = answered(body, "target", node);
      return "Moving the services to " + target + ": the ACTIVE node releases them, then " +
             target + " takes them over. They stay on " + target +
             (call.lifetime ? " for " + *call.lifetime + " at most, or" : "") +
             " until `tandem resource clear`.\n";
    }
    case AdminAction::kClear:
      return "Cleared the operator's move and any failures: the election decides again.\n";
    case AdminAction::kStandby:
      return answered(body, "node", node.empty() ? "this node" : node) +
             " is in standby: it hands over the services if it holds them and takes none " +
             (call.lifetime ? "for " + *call.lifetime + ", or " : "") +
             "until `tandem node online`.\n";
    case AdminAction::kOnline:
      return answered(body, "node", node.empty() ? "this node" : node) +
             " is online: it takes part in the election again.\n";
    case AdminAction::kMaintenanceOn:
      return "Maintenance mode is on, on every node: no node starts or stops the services, "
             "whatever fails, until `tandem maintenance off`. Monitoring goes on.\n";
    case AdminAction::kMaintenanceOff:
      return "Maintenance mode is off: the election decides again, from where the services "
             "are now.\n";
  }
  return "done\n";
}

}  // namespace

Result<uint64_t> lifetimeMs(const std::string& text) {
  const std::string range = formatDuration(Millis(ipc::kMinLifetimeMs)) + " to " +
                            formatDuration(Millis(ipc::kMaxLifetimeMs));
  std::optional<Millis> d = parseDuration(text);
  if (!d) {
    return fail(ErrorCode::kInvalidArgument, "--lifetime " + quote(text) +
                                                 " is not a duration of " + range +
                                                 " (write it like 90s, 10m or 1h30m)");
  }
  const auto ms = static_cast<uint64_t>(d->count());
  if (ms < ipc::kMinLifetimeMs || ms > ipc::kMaxLifetimeMs) {
    return fail(ErrorCode::kInvalidArgument, "--lifetime " + text + " is out of range: " + range +
                                                 "; leave it out for no limit");
  }
  return ms;
}

std::string_view commandName(AdminAction action) {
  switch (action) {
    case AdminAction::kMove:
      return "resource move";
    case AdminAction::kClear:
      return "resource clear";
    case AdminAction::kStandby:
      return "node standby";
    case AdminAction::kOnline:
      return "node online";
    case AdminAction::kMaintenanceOn:
      return "maintenance on";
    case AdminAction::kMaintenanceOff:
      return "maintenance off";
  }
  return "?";
}

std::vector<std::string> nodeNames(const json& status) {
  std::vector<std::string> names;
  auto nodes = status.find("nodes");
  if (nodes == status.end() || !nodes->is_array()) return names;
  for (const json& n : *nodes) {
    if (!n.is_object()) continue;
    auto name = n.find("name");
    if (name != n.end() && name->is_string()) names.push_back(name->get<std::string>());
  }
  return names;
}

Result<void> checkNode(const json& status, const std::string& node) {
  std::vector<std::string> names = nodeNames(status);
  if (names.empty() || std::find(names.begin(), names.end(), node) != names.end()) return {};
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return fail(ErrorCode::kInvalidArgument,
              "unknown node " + quote(node) + "; the cluster's nodes are " + list);
}

Result<json> runAdmin(const AdminCall& call, const DaemonCall& daemon) {
  if (call.action == AdminAction::kMove && (!call.node || call.node->empty())) {
    return fail(ErrorCode::kInvalidArgument, "name the node to move the services to");
  }
  if (call.node && call.node->empty()) {
    return fail(ErrorCode::kInvalidArgument, "the node name is empty; leave it out for this node");
  }
  std::optional<uint64_t> lifetime_ms;
  if (call.lifetime) {
    auto ms = lifetimeMs(*call.lifetime);
    if (!ms) return fail(ms.error());
    lifetime_ms = *ms;
  }
  const bool names_node = call.action == AdminAction::kMove ||
                          call.action == AdminAction::kStandby ||
                          call.action == AdminAction::kOnline;
  std::string node = call.node.value_or("");
  if (names_node) {
    // The status checks a named node, and names this one when none is given: a standby
    // request always says whom it means.
    auto status = daemon(ipc::RequestId::kStatus, json::object());
    if (!status) return status;
    auto body = ipc::bodyResult(*status);
    if (!body) return fail(body.error());
    if (call.node) {
      if (auto known = checkNode(*body, node); !known) return fail(known.error());
    } else {
      auto local = body->find("local_node");
      if (local == body->end() || !local->is_string() || local->get<std::string>().empty()) {
        return fail(ErrorCode::kUnavailable,
                    "tandemd did not say which node it is (no cluster?); name the node");
      }
      node = local->get<std::string>();
    }
  }
  switch (call.action) {
    case AdminAction::kMove:
      return daemon(ipc::RequestId::kMove, ipc::moveBody({node, lifetime_ms}));
    case AdminAction::kClear:
      return daemon(ipc::RequestId::kClear, json::object());
    case AdminAction::kStandby:
      return daemon(ipc::RequestId::kStandby, ipc::standbyBody({node, true, lifetime_ms}));
    case AdminAction::kOnline:
      return daemon(ipc::RequestId::kStandby, ipc::standbyBody({node, false, std::nullopt}));
    case AdminAction::kMaintenanceOn:
    case AdminAction::kMaintenanceOff:
      return daemon(ipc::RequestId::kMaintenance,
                    ipc::maintenanceBody({call.action == AdminAction::kMaintenanceOn}));
  }
  return fail(ErrorCode::kInternal, "unhandled admin command");
}

CommandOutput renderAdmin(const AdminCall& call, const Result<json>& answer, bool json_output) {
  return renderAnswer(answer, json_output, "tandem " + std::string(commandName(call.action)),
                      [&call](const json& body) { return successText(call, body); });
}

}  // namespace tandem::cli
