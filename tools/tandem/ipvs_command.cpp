// `tandem ipvs show`: the IPVS table this director's tandemd keeps, with counters. The shell:
// the request goes through ipc_client.h, the output is format_ipvs.h's.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "commands.h"
#include "format_ipvs.h"
#include "ipc_client.h"

namespace tandem::cli {

void addIpvsCommands(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* ipvs = app.add_subcommand("ipvs", "the IPVS table tandemd keeps on this director");
  ipvs->require_subcommand(1);
  CLI::App* show = ipvs->add_subcommand(
      "show",
      "services and real servers with weights, health, connections and rates (exit 3 if "
      "tandemd is unreachable or keeps no IPVS table)");
  auto options = std::make_shared<IpcOptions>();
  addIpcOptions(*show, *options);
  show->callback([options, &global, exit_code] {
    auto answer = callDaemon(*options, ipc::RequestId::kIpvs, nlohmann::json::object());
    CommandOutput output = renderIpvs(answer, global.json);
    std::cout << output.out << std::flush;
    std::cerr << output.err;
    *exit_code = output.exit_code;
  });
}

}  // namespace tandem::cli
