// tandem check run: one health check by hand, with the options of [virtual_server.check], run
// in this process (not through tandemd) by the checker tandemd uses. The options are read by the
// config loader itself, so a check given here means what it means in the config.
#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "config/config_loader.h"
#include "health/linux_checkers.h"
#include "loop/qb_dispatcher.h"
#include "process/posix_child_runner.h"

namespace tandem::cli {

namespace {

constexpr char kSource[] = "tandem check run";
constexpr char kKeyPath[] = "/nonexistent/tandem-check-run.key";

// The config loader wants a cluster key; this one exists only here.
class CheckFiles final : public config::FileSystem {
 public:
  std::optional<config::FileInfo> stat(const std::string& path) const override {
    if (path == kKeyPath) return config::FileInfo{true, 0600, 32};
    return posix_.stat(path);
  }
  Result<std::string> readFile(const std::string& path, size_t max_bytes) const override {
    if (path == kKeyPath) return std::string(32, 'k');
    return posix_.readFile(path, max_bytes);
  }

 private:
  config::PosixFileSystem posix_;
};

// A --set value as TOML: numbers, booleans, arrays and quoted strings as given; anything else
// is a string.
std::string tomlValue(const std::string& v) {
  if (v == "true" || v == "false" || (!v.empty() && (v.front() == '[' || v.front() == '"'))) {
    return v;
  }
  if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

struct CheckArgs {
  std::string type;
  std::string address;
  std::string timeout;
  std::string command;
  std::vector<std::string> sets;  // key=value
};

int run(const CheckArgs& a, const GlobalOptions& global) {
  auto bad = [&](const std::string& what) {
    std::cerr << kSource << ": " << what << "\n";
    return kExitInvalid;
  };
  auto endpoint = Endpoint::parse(a.address, false);
  if (!endpoint) {
    return bad("--address \"" + a.address +
               "\" is not ADDRESS:PORT (IPv6 in brackets: [2001:db8::10]:80)");
  }
  std::string check = "type = " + tomlValue(a.type) + "\n";
  if (!a.timeout.empty()) check += "timeout = " + tomlValue(a.timeout) + "\n";
  if (!a.command.empty()) check += "command = " + tomlValue(a.command) + "\n";
  for (const auto& s : a.sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      return bad("--set \"" + s + "\" is not KEY=VALUE (a key of [virtual_server.check])");
    }
    check += s.substr(0, eq) + " = " + tomlValue(s.substr(eq + 1)) + "\n";
  }
  // The virtual service around the one real server: on the next port, so that the two are not
  // one address (which the config refuses), and of the protocol the check speaks.
  Endpoint service = *endpoint;
  service.port = endpoint->port == 65535 ? 65534 : endpoint->port + 1;
  const char* protocol = a.type == "udp" || a.type == "dns" ? "udp" : "tcp";
  const std::string text =
      std::string("[cluster]\nname = \"check\"\n[[cluster.key]]\nid = 1\n") + "file = \"" +
      kKeyPath + "\"\n[[node]]\nname = \"cli\"\n" +
      "[[virtual_server]]\nname = \"check\"\naddress = \"" + service.toString() +
      "\"\nprotocol = \"" + protocol + "\"\n[virtual_server.check]\n" + check +
      "[[virtual_server.real_server]]\naddress = \"" + endpoint->toString() + "\"\n";
  CheckFiles files;
  config::LoadResult loaded = config::loadConfigText(text, kSource, files);
  if (!loaded.ok()) {
    for (const auto& d : loaded.diagnostics.sorted()) {
      if (d.severity == config::Diagnostic::Severity::kError)
        std::cerr << kSource << ": " << d.message << "\n";
    }
    return kExitInvalid;
  }
  const config::VirtualServer& vs = loaded.config->virtual_servers.at(0);
  const config::RealServer& rs = vs.real_servers.at(0);
  if (rs.check.type == config::CheckType::kNone) return bad("--type none checks nothing");

  auto dispatcher = loop::QbDispatcher::create();
  if (!dispatcher) {
    std::cerr << kSource << ": " << dispatcher.error().message << "\n";
    return kExitFailed;
  }
  process::PosixChildRunner children(**dispatcher);
  auto checker = resources::health::makeLinuxChecker(rs.check.type, **dispatcher, children);
  if (!checker) {
    std::cerr << kSource << ": " << config::checkTypeName(rs.check.type)
              << " checks have no checker in this build\n";
    return kExitInvalid;
  }
  resources::health::ProbeTarget target;
  target.address = rs.address;
  if (rs.check.port != 0) target.address.port = rs.check.port;
  target.check = rs.check;
  target.virtual_server = vs.name;
  std::optional<resources::health::ProbeResult> result;
  checker->probe(target, [&](resources::health::ProbeResult r) {
    result = std::move(r);
    (*dispatcher)->stop();
  });
  (*dispatcher)->run();
  if (!result) {
    std::cerr << kSource << ": the check ended without a result\n";
    return kExitFailed;
  }
  const std::string type = config::checkTypeName(rs.check.type);
  if (global.json) {
    std::cout << nlohmann::json{{"type", type},
                                {"address", target.address.toString()},
                                {"healthy", result->ok},
                                {"reason", result->reason},
                                {"took_ms", result->took.count()},
                                {"timeout_ms", rs.check.timeout.count()}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << type << " " << target.address.toString() << ": "
              << (result->ok ? "healthy" : "unhealthy") << " (" << result->reason << ") in "
              << result->took.count() << " ms\n";
  }
  return result->ok ? kExitOk : kExitFailed;
}

}  // namespace

void addCheckCommands(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* check = app.add_subcommand("check", "real-server health checks");
  check->require_subcommand(1);
  CLI::App* r = check->add_subcommand(
      "run", "run one check by hand, as tandemd would; exit 0 when healthy, 3 when not");
  auto args = std::make_shared<CheckArgs>();
  r->add_option("--type", args->type, "tcp, exec, ... (as virtual_server.check.type)")->required();
  r->add_option("--address", args->address, "the real server, ADDRESS:PORT")->required();
  r->add_option("--timeout", args->timeout, "as virtual_server.check.timeout, e.g. 500ms");
  r->add_option("--command", args->command, "exec: the shell line to run");
  r->add_option("--set", args->sets,
                "KEY=VALUE: any other key of [virtual_server.check], e.g. --set tcp_reset=true");
  r->callback([args, &global, exit_code] { *exit_code = run(*args, global); });
}

}  // namespace tandem::cli
