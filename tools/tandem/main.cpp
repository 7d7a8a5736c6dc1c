// tandem: the admin tool. A command table over CLI11; each command prints text or, with
// --json, one JSON document, and exits with the codes in commands.h.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  using namespace tandem::cli;
  CLI::App app{"tandem: administer a tandem director cluster", "tandem"};
  app.require_subcommand(1);
  GlobalOptions global;
  // --json anywhere: `tandem --json status` and `tandem status --json` alike.
  app.add_flag("--json", global.json, "print one JSON document instead of text");
  app.fallthrough();
  int exit_code = kExitOk;
  addConfigCommands(app, global, &exit_code);
  addKeygenCommand(app, global, &exit_code);
  addStatusCommand(app, global, &exit_code);
  addAdminCommands(app, global, &exit_code);
  addIpvsCommands(app, global, &exit_code);
  addSyncCommands(app, global, &exit_code);
  addCheckCommands(app, global, &exit_code);
  addHistoryCommand(app, global, &exit_code);
  addExplainCommand(app, global, &exit_code);
  addRealCommands(app, global, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return exit_code;
}
