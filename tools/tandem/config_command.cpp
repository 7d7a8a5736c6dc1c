#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "config/config_loader.h"
#include "format_config.h"
#include "importer.h"
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

struct ImportArgs {
  std::string from;
  std::vector<std::string> files;
  std::string output;
  std::string config_id;
  std::string key_file = "authkey";
};

// Writes text to path through a temporary file beside it, so that a failure leaves no half file.
bool writeWhole(const std::string& path, const std::string& text, std::string* why) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      *why = "cannot write " + tmp;
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *why = "cannot rename " + tmp + " to " + path;
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

int importConfig(const ImportArgs& args, const GlobalOptions& global) {
  importer::PosixSourceReader reader;
  importer::ImportOptions options;
  options.config_id = args.config_id;
  options.key_file = args.key_file;
  importer::ImportResult r;
  if (args.from == "keepalived") {
    r = importer::importKeepalived(args.files, reader, options);
  } else if (args.files.size() != 1) {
    std::cerr << "tandem config import --from ldirectord takes one file: ldirectord.cf is the "
                 "same on both directors\n";
    return kExitUsage;
  } else {
    r = importer::importLdirectord(args.files[0], reader, options);
  }
  nlohmann::json errors = nlohmann::json::array();
  for (const auto& e : r.errors) {
    errors.push_back({{"file", e.file}, {"line", e.line}, {"message", e.message}});
  }
  std::string why;
  bool written = r.ok() && !args.output.empty() && writeWhole(args.output, r.conf, &why);
  if (global.json) {
    nlohmann::json out = {{"from", args.from},
                          {"files", args.files},
                          {"ok", r.ok()},
                          {"errors", errors},
                          {"report", r.report.json()}};
    if (r.ok()) {
      if (args.output.empty()) {
        out["conf"] = r.conf;
      } else {
        out["output"] = args.output;
        out["written"] = written;
        if (!written) out["error"] = why;
      }
    }
    std::cout << out.dump(2) << "\n";
  } else {
    for (const auto& e : r.errors) std::cerr << e.text() << "\n";
    if (r.ok()) {
      std::cerr << r.report.text();
      if (args.output.empty()) std::cout << r.conf;
      if (written)
        std::cerr << "wrote " << args.output << "; check it with `tandem config verify "
                  << args.output << "`\n";
    }
  }
  if (!r.ok()) return kExitInvalid;
  if (!args.output.empty() && !written) {
    if (!global.json) std::cerr << "tandem config import: " << why << "\n";
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

void addConfigCommands(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* cfg = app.add_subcommand("config", "check and reload the configuration");
  cfg->require_subcommand(1);
  CLI::App* v = cfg->add_subcommand("verify", "check a config file; exit 0 when valid, 1 if not");
  auto path = std::make_shared<std::string>(std::string(config::kDefaultConfigPath));
  v->add_option("file", *path, "the config file")->capture_default_str();
  v->callback([path, &global, exit_code] { *exit_code = verify(*path, global); });

  CLI::App* imp = cfg->add_subcommand(
      "import",
      "write a tandem.conf from a keepalived or ldirectord config, with a report on stderr of "
      "where each line went, what has no equivalent and what behaves differently");
  auto import_args = std::make_shared<ImportArgs>();
  imp->add_option("--from", import_args->from, "the config's kind: keepalived or ldirectord")
      ->required()
      ->check(CLI::IsMember({"keepalived", "ldirectord"}));
  imp->add_option("files", import_args->files,
                  "the config file; for keepalived, one per director (the second gives the "
                  "second [[node]])")
      ->required()
      ->expected(1, 2);
  imp->add_option("-o,--output", import_args->output, "write the tandem.conf here, not to stdout");
  imp->add_option("--config-id", import_args->config_id,
                  "keepalived's config id (keepalived -i): take the @ID lines for it");
  imp->add_option("--key-file", import_args->key_file,
                  "the key file the config names (relative: beside the config)")
      ->capture_default_str();
  imp->callback(
      [import_args, &global, exit_code] { *exit_code = importConfig(*import_args, global); });

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
