// `tandem sync status`: this director's IPVS sync daemons and every director's connection table
// as the heartbeats report it. The shell: the request goes through ipc_client.h, the output is
// format_sync.h's.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "commands.h"
#include "format_sync.h"
#include "ipc_client.h"

namespace tandem::cli {

void addSyncCommands(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* sync = app.add_subcommand("sync", "IPVS connection sync on this director");
  sync->require_subcommand(1);
  CLI::App* status = sync->add_subcommand(
      "status",
      "the sync daemons, each director's connection table and what a failback waits for (exit 3 "
      "if tandemd is unreachable)");
  auto options = std::make_shared<IpcOptions>();
  addIpcOptions(*status, *options);
  status->callback([options, &global, exit_code] {
    auto answer = callDaemon(*options, ipc::RequestId::kSync, nlohmann::json::object());
    CommandOutput output = renderSync(answer, global.json);
    std::cout << output.out << std::flush;
    std::cerr << output.err;
    *exit_code = output.exit_code;
  });
}

}  // namespace tandem::cli
