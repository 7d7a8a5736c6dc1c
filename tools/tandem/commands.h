#pragma once

// CLI11 is declared, not included: it costs ~10 s of compile per file, and the formatters that
// take only the exit codes below need none of it. The command files include it themselves.
namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's name
class App;
}  // namespace CLI

namespace tandem::cli {

// Stable exit codes: scripts and the systemd units depend on them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;  // the input (config, argument) is wrong
inline constexpr int kExitUsage = 2;    // the command line is wrong
inline constexpr int kExitFailed = 3;   // the operation failed (I/O, daemon unreachable)

struct GlobalOptions {
  bool json = false;
};

// Each registers its subcommands on app and sets *exit_code when it runs.
void addConfigCommands(CLI::App& app, const GlobalOptions& global, int* exit_code);
void addKeygenCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void addStatusCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void addAdminCommands(CLI::App& app, const GlobalOptions& global, int* exit_code);
void addIpvsCommands(CLI::App& app, const GlobalOptions& global, int* exit_code);
void addCheckCommands(CLI::App& app, const GlobalOptions& global, int* exit_code);
void addSyncCommands(CLI::App& app, const GlobalOptions& global, int* exit_code);
void addHistoryCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void addExplainCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void addRealCommands(CLI::App& app, const GlobalOptions& global, int* exit_code);

}  // namespace tandem::cli
