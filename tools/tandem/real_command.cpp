// `tandem real drain|enable|list`: the shell around drain.h.
#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "commands.h"
#include "drain.h"
#include "ipc_client.h"

namespace tandem::cli {

namespace {

struct RealArgs {
  IpcOptions ipc;
  std::string service;
  std::string server;
  std::string timeout;
  bool wait = false;
};

int64_t monotonicMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void addChange(CLI::App& real, bool on, const GlobalOptions& global, int* exit_code) {
  CLI::App* cmd = real.add_subcommand(
      on ? "drain" : "enable",
      on ? "hold SERVER at weight 0 in SERVICE on every director: its connections finish, no "
           "new ones come"
         : "give SERVER its weight in SERVICE back on every director");
  auto args = std::make_shared<RealArgs>();
  addIpcOptions(*cmd, args->ipc);
  cmd->add_option("service", args->service,
                  "the virtual service: its name, \"tcp ADDR:PORT\", ADDR:PORT or \"fwmark N\"")
      ->required();
  cmd->add_option("server", args->server, "the real server: ADDR:PORT, or ADDR")->required();
  CLI::Option* timeout = nullptr;
  if (on) {
    cmd->add_flag("--wait", args->wait,
                  "then wait until the ACTIVE's table holds no active connection and no "
                  "persistence template of it");
    timeout = cmd->add_option(
        "--timeout", args->timeout,
        std::string("how long --wait waits (default ") + kDefaultDrainTimeout + ")");
  }
  cmd->callback([args, on, timeout, &global, exit_code] {
    DrainCall call{on, args->service, args->server, args->wait, std::nullopt};
    if (timeout != nullptr && timeout->count() > 0) call.timeout = args->timeout;
    CommandOutput output = runDrain(
        call,
        [args](ipc::RequestId id, const nlohmann::json& body) {
          return callDaemon(args->ipc, id, body);
        },
        monotonicMs, [](int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); },
        global.json);
    std::cout << output.out << std::flush;
    std::cerr << output.err;
    *exit_code = output.exit_code;
  });
}

}  // namespace

void addRealCommands(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* real = app.add_subcommand("real", "drain a real server, or enable it again");
  real->require_subcommand(1);
  addChange(*real, true, global, exit_code);
  addChange(*real, false, global, exit_code);
  CLI::App* list =
      real->add_subcommand("list", "the drained real servers and what is left on each");
  auto options = std::make_shared<IpcOptions>();
  addIpcOptions(*list, *options);
  list->callback([options, &global, exit_code] {
    CommandOutput output = renderDrains(
        callDaemon(*options, ipc::RequestId::kDrains, nlohmann::json::object()), global.json);
    std::cout << output.out << std::flush;
    std::cerr << output.err;
    *exit_code = output.exit_code;
  });
}

}  // namespace tandem::cli
