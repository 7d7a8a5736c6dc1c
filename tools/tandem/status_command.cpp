// `tandem status`: asks tandemd for its view of the cluster and prints it. The shell: the
// request goes through ipc_client.h, the output is format_status.h's.
#include <iostream>
#include <memory>

#include "commands.h"
#include "format_status.h"
#include "ipc_client.h"

namespace tandem::cli {

void addStatusCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "status", "show the cluster as this node's tandemd sees it (exit 3 if unreachable)");
  auto ipc = std::make_shared<IpcOptions>();
  addIpcOptions(*cmd, *ipc);
  cmd->callback([ipc, &global, exit_code] {
    auto answer = callDaemon(*ipc, ipc::RequestId::kStatus, nlohmann::json::object());
    CommandOutput output = renderStatus(answer, global.json);
    std::cout << output.out << std::flush;
    std::cerr << output.err;
    *exit_code = output.exit_code;
  });
}

}  // namespace tandem::cli
