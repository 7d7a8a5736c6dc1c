// `tandem history [--since TIME]`: the shell around format_history.h.
#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <memory>

#include "commands.h"
#include "format_history.h"
#include "ipc_client.h"

namespace tandem::cli {

void addHistoryCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "history",
      "role changes, takeovers with their duration, real-server transitions and admin actions, "
      "each with its reason; kept across restarts of tandemd");
  struct Args {
    IpcOptions ipc;
    std::string since;
  };
  auto args = std::make_shared<Args>();
  addIpcOptions(*cmd, args->ipc);
  CLI::Option* since = cmd->add_option("--since", args->since,
                                       "a duration back (30m, 2h) or a local time "
                                       "(\"2026-12-03 14:05\")");
  cmd->callback([args, since, &global, exit_code] {
    nlohmann::json body = nlohmann::json::object();
    if (since->count() > 0) {
      const auto now =
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count());
      auto ms = parseSince(args->since, now);
      if (!ms) {
        CommandOutput out = renderHistory(Result<nlohmann::json>(fail(ms.error())), global.json);
        std::cout << out.out;
        std::cerr << out.err;
        *exit_code = out.exit_code;
        return;
      }
      body["since_ms"] = *ms;
    }
    CommandOutput output =
        renderHistory(callDaemon(args->ipc, ipc::RequestId::kHistory, body), global.json);
    std::cout << output.out << std::flush;
    std::cerr << output.err;
    *exit_code = output.exit_code;
  });
}

}  // namespace tandem::cli
