// `tandem resource move|clear`, `tandem node standby|online` and `tandem maintenance on|off`:
// the shell around admin.h. The
// requests go through ipc_client.h; what to ask and what to print is admin.h's.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "admin.h"
#include "commands.h"
#include "ipc_client.h"

namespace tandem::cli {

namespace {

struct AdminArgs {
  IpcOptions ipc;
  std::string node;
  std::string lifetime;
};

void addAdmin(CLI::App& parent, const char* name, const char* help, AdminAction action,
              const GlobalOptions& global, int* exit_code) {
  CLI::App* cmd = parent.add_subcommand(name, help);
  auto args = std::make_shared<AdminArgs>();
  addIpcOptions(*cmd, args->ipc);
  CLI::Option* node = nullptr;
  CLI::Option* lifetime = nullptr;
  switch (action) {
    case AdminAction::kMove:
      node = cmd->add_option("node", args->node, "the node to move the services to")->required();
      break;
    case AdminAction::kStandby:
    case AdminAction::kOnline:
      node = cmd->add_option("node", args->node, "the node (default: this one)");
      break;
    case AdminAction::kClear:
    case AdminAction::kMaintenanceOn:
    case AdminAction::kMaintenanceOff:
      break;
  }
  if (action == AdminAction::kMove || action == AdminAction::kStandby) {
    lifetime = cmd->add_option("--lifetime", args->lifetime,
                               "end by itself after DURATION (1s to 168h, e.g. 30m); default: "
                               "until cleared");
  }
  cmd->callback([node, lifetime, args, action, &global, exit_code] {
    AdminCall call{action, std::nullopt, std::nullopt};
    if (node != nullptr && node->count() > 0) call.node = args->node;
    if (lifetime != nullptr && lifetime->count() > 0) call.lifetime = args->lifetime;
    auto answer = runAdmin(call, [args](ipc::RequestId id, const nlohmann::json& body) {
      return callDaemon(args->ipc, id, body);
    });
    CommandOutput output = renderAdmin(call, answer, global.json);
    std::cout << output.out << std::flush;
    std::cerr << output.err;
    *exit_code = output.exit_code;
  });
}

}  // namespace

void addAdminCommands(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* resource = app.add_subcommand("resource", "move the services, or clear a move");
  resource->require_subcommand(1);
  addAdmin(*resource, "move",
           "hand the services over to NODE and keep them there (until `resource clear`)",
           AdminAction::kMove, global, exit_code);
  addAdmin(*resource, "clear", "drop the operator's move and any failures", AdminAction::kClear,
           global, exit_code);
  CLI::App* node = app.add_subcommand("node", "put a node in standby or back online");
  node->require_subcommand(1);
  addAdmin(*node, "standby", "NODE (default: this one) gives up the services and takes none",
           AdminAction::kStandby, global, exit_code);
  addAdmin(*node, "online", "NODE (default: this one) takes part in the election again",
           AdminAction::kOnline, global, exit_code);
  CLI::App* maintenance = app.add_subcommand(
      "maintenance", "cluster wide: stop starting and stopping the services, keep monitoring");
  maintenance->require_subcommand(1);
  addAdmin(*maintenance, "on",
           "no node takes over, releases or fails back, and a tandemd restart keeps what it holds",
           AdminAction::kMaintenanceOn, global, exit_code);
  addAdmin(*maintenance, "off", "the election decides again", AdminAction::kMaintenanceOff, global,
           exit_code);
}

}  // namespace tandem::cli
