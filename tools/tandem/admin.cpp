#include "admin.h"

#include <algorithm>
#include <utility>

#include "commands.h"

namespace tandem::cli {

namespace {

using nlohmann::json;

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

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
             " until `tandem resource clear`.\n";
    }
    case AdminAction::kClear:
      return "Cleared the operator's move and any failures: the election decides again.\n";
    case AdminAction::kStandby:
      return answered(body, "node", node.empty() ? "this node" : node) +
             " is in standby: it hands over the services if it holds them and takes none "
             "until `tandem node online`.\n";
    case AdminAction::kOnline:
      return answered(body, "node", node.empty() ? "this node" : node) +
             " is online: it takes part in the election again.\n";
  }
  return "done\n";
}

}  // namespace

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
              "unknown node " + quoted(node) + "; the cluster's nodes are " + list);
}

Result<json> runAdmin(const AdminCall& call, const DaemonCall& daemon) {
  if (call.action == AdminAction::kMove && (!call.node || call.node->empty())) {
    return fail(ErrorCode::kInvalidArgument, "name the node to move the services to");
  }
  if (call.node && call.node->empty()) {
    return fail(ErrorCode::kInvalidArgument, "the node name is empty; leave it out for this node");
  }
  const bool names_node = call.action != AdminAction::kClear;
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
      return daemon(ipc::RequestId::kMove, ipc::moveBody({node}));
    case AdminAction::kClear:
      return daemon(ipc::RequestId::kClear, json::object());
    case AdminAction::kStandby:
    case AdminAction::kOnline:
      return daemon(ipc::RequestId::kStandby,
                    ipc::standbyBody({node, call.action == AdminAction::kStandby}));
  }
  return fail(ErrorCode::kInternal, "unhandled admin command");
}

CommandOutput renderAdmin(const AdminCall& call, const Result<json>& answer, bool json_output) {
  return renderAnswer(answer, json_output, "tandem " + std::string(commandName(call.action)),
                      [&call](const json& body) { return successText(call, body); });
}

}  // namespace tandem::cli
