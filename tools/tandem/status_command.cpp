// `tandem status`: asks tandemd for its view of the cluster and prints it. The shell: the
// request goes through ipc_client.h, the output is format_status.h's.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <ctime>
#include <iostream>
#include <memory>
#include <thread>

#include "commands.h"
#include "common/duration.h"
#include "format_status.h"
#include "ipc_client.h"

namespace tandem::cli {

namespace {

volatile std::sig_atomic_t interrupted = 0;

// `tandem status --watch`: a frame per interval, drawn over the last one, until ^C. This is the
// one loop in the tool; it sleeps between requests, which is all a terminal client does.
int watchStatus(const IpcOptions& ipc, const std::string& every, bool json) {
  if (json) {
    std::cerr << "tandem status: --watch draws for a terminal; for scripts, run `tandem --json "
                 "status` at the rate you need\n";
    return kExitUsage;
  }
  if (isatty(STDOUT_FILENO) == 0) {
    std::cerr << "tandem status: --watch needs a terminal on standard output\n";
    return kExitUsage;
  }
  std::optional<Millis> interval = parseDuration(every);
  if (!interval || *interval < Millis(100)) {
    std::cerr << "tandem status: --interval " << every << " is not a duration of 100ms or more\n";
    return kExitInvalid;
  }
  std::signal(SIGINT, [](int) { interrupted = 1; });
  std::signal(SIGTERM, [](int) { interrupted = 1; });
  std::cout << "\x1b[?25l";  // no cursor blinking over the frame
  for (bool first = true; interrupted == 0; first = false) {
    CommandOutput output =
        renderStatus(callDaemon(ipc, ipc::RequestId::kStatus, nlohmann::json::object()), false);
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&now));
    std::string text = "Every " + formatDuration(*interval) + ", " + stamp + " (^C ends)\n\n" +
                       (output.exit_code == kExitOk ? output.out : output.err);
    std::cout << watchFrame(text, first) << std::flush;
    for (auto slept = Millis(0); slept < *interval && interrupted == 0; slept += Millis(50)) {
      std::this_thread::sleep_for(Millis(50));
    }
  }
  std::cout << "\x1b[?25h" << std::flush;
  return kExitOk;
}

}  // namespace

void addStatusCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "status", "show the cluster as this node's tandemd sees it (exit 3 if unreachable)");
  auto ipc = std::make_shared<IpcOptions>();
  addIpcOptions(*cmd, *ipc);
  auto watch = std::make_shared<bool>(false);
  auto every = std::make_shared<std::string>("1s");
  cmd->add_flag("--watch", *watch, "refresh in place until interrupted (a terminal only)");
  cmd->add_option("--interval", *every, "with --watch: how often (default 1s)");
  cmd->callback([ipc, watch, every, &global, exit_code] {
    if (*watch) {
      *exit_code = watchStatus(*ipc, *every, global.json);
      return;
    }
    auto answer = callDaemon(*ipc, ipc::RequestId::kStatus, nlohmann::json::object());
    CommandOutput output = renderStatus(answer, global.json);
    std::cout << output.out << std::flush;
    std::cerr << output.err;
    *exit_code = output.exit_code;
  });
}

}  // namespace tandem::cli
