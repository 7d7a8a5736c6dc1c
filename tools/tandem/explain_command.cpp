// `tandem explain`: the shell around format_explain.h.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "commands.h"
#include "format_explain.h"
#include "ipc_client.h"

namespace tandem::cli {

void addExplainCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "explain", "why the ACTIVE is active, and what would happen if it failed now");
  auto options = std::make_shared<IpcOptions>();
  addIpcOptions(*cmd, *options);
  cmd->callback([options, &global, exit_code] {
    CommandOutput output = renderExplain(
        callDaemon(*options, ipc::RequestId::kExplain, nlohmann::json::object()), global.json);
    std::cout << output.out << std::flush;
    std::cerr << output.err;
    *exit_code = output.exit_code;
  });
}

}  // namespace tandem::cli
