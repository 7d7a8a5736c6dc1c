#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "config/config_loader.h"
#include "format_config.h"
#include "ipc_client.h"

namespace tandem::cli {

namespace {

nlohmann::json diagnosticsJson(const config::Diagnostics& diags) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : diags.sorted()) {
    out.push_back(
        {{"severity", d.severity == config::Diagnostic::Severity::kError ? "error" : "warning"},
         {"file", d.file},
         {"line", d.line},
         {"column", d.column},
         {"message", d.message}});
  }
  return out;
}

int verify(const std::string& path, const GlobalOptions& global) {
  config::PosixFileSystem fs;
  config::LoadResult r = config::loadConfigFile(path, fs);
  if (global.json) {
    nlohmann::json out = {{"file", path},
                          {"valid", r.ok()},
                          {"errors", r.diagnostics.errorCount()},
                          {"diagnostics", diagnosticsJson(r.diagnostics)}};
    std::cout << out.dump(2) << "\n";
  } else {
    std::cerr << r.diagnostics.formatAll();
    if (r.ok()) {
      std::cout << path << ": valid (" << r.config->nodes.size() << " nodes, "
                << r.config->vips.size() << " VIPs, " << r.config->virtual_servers.size()
                << " virtual servers)\n";
    } else {
      std::cerr << path << ": " << r.diagnostics.errorCount() << " error"
                << (r.diagnostics.errorCount() == 1 ? "" : "s") << "\n";
    }
  }
  return r.ok() ? kExitOk : kExitInvalid;
}

}  // namespace

void addConfigCommands(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* cfg = app.add_subcommand("config", "check and reload the configuration");
  cfg->require_subcommand(1);
  CLI::App* v = cfg->add_subcommand("verify", "check a config file; exit 0 when valid, 1 if not");
  auto path = std::make_shared<std::string>(std::string(config::kDefaultConfigPath));
  v->add_option("file", *path, "the config file")->capture_default_str();
  v->callback([path, &global, exit_code] { *exit_code = verify(*path, global); });

  using Render = CommandOutput (*)(const Result<nlohmann::json>&, bool);
  auto daemonCommand = [&global, exit_code, cfg](const char* name, const char* help,
                                                 ipc::RequestId id, Render render) {
    CLI::App* c = cfg->add_subcommand(name, help);
    auto options = std::make_shared<IpcOptions>();
    addIpcOptions(*c, *options);
    c->callback([options, id, render, &global, exit_code] {
      CommandOutput output =
          render(callDaemon(*options, id, nlohmann::json::object()), global.json);
      std::cout << output.out << std::flush;
      std::cerr << output.err;
      *exit_code = output.exit_code;
    });
  };
  daemonCommand("diff",
                "what a reload of tandemd's config file would change (the kernel table, the "
                "VIPs, the checks, keys by id), changing nothing; exit 1 if it would be refused",
                ipc::RequestId::kConfigDiff, renderConfigDiff);
  daemonCommand("reload",
                "apply the config file's changes, and only those (as SIGHUP does); exit 1 if "
                "refused, with nothing changed",
                ipc::RequestId::kReload, renderReload);
  daemonCommand("show", "the running config, as tandemd read it", ipc::RequestId::kConfigShow,
                renderConfigShow);
}

}  // namespace tandem::cli
