// tandemd: the tandem director daemon. This file is the shell and holds no policy: it parses
// the command line, builds the Linux platform (every OS touchpoint, daemon/platform) and runs
// the director (daemon/director), which builds and owns everything else.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "config/config_loader.h"
#include "config/failback_override.h"
#include "director/director.h"
#include "platform/daemonize.h"
#include "platform/linux_platform.h"
#include "platform/qb_logger.h"
#include "platform/systemd_notifier.h"

namespace {

using namespace tandem;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // invalid config, or the daemon could not start
constexpr int kExitUsage = 2;

int checkConfig(const std::string& path, const std::string& failback) {
  if (!failback.empty()) {
    if (auto o = config::parseFailbackOverride(failback); !o) {
      std::cerr << o.error().message << "\n";
      return kExitFailure;
    }
  }
  config::PosixFileSystem files;
  config::LoadResult r = config::loadConfigFile(path, files);
  std::cerr << r.diagnostics.formatAll();
  if (!r.ok()) {
    int errors = r.diagnostics.errorCount();
    std::cerr << path << ": " << errors << " error" << (errors == 1 ? "" : "s") << "\n";
    return kExitFailure;
  }
  std::cout << path << ": valid (" << r.config->nodes.size() << " nodes, " << r.config->vips.size()
            << " VIPs, " << r.config->virtual_servers.size() << " virtual servers)\n";
  return kExitOk;
}

int runDaemon(std::string path, bool foreground, const std::string& node_name,
              const std::string& failback) {
  // Reloads re-read the path after the daemon has left the directory it was started in.
  std::error_code ec;
  if (auto abs = std::filesystem::absolute(path, ec); !ec) path = abs.lexically_normal().string();

  platform::QbLogger logger(/*to_stderr=*/true);
  std::optional<platform::DetachedProcess> detached;
  if (!foreground) {
    auto d = platform::daemonize();
    if (!d) {
      logger.log(platform::LogLevel::kError, "cannot daemonize: " + d.error().message);
      return kExitFailure;
    }
    detached.emplace(std::move(*d));
  }
  logger.log(platform::LogLevel::kInfo, "tandemd " TANDEM_VERSION " starting pid=" +
                                            std::to_string(::getpid()) + " config=" + path);
  auto linux_platform = platform::LinuxPlatform::create(logger);
  if (!linux_platform) {
    logger.log(platform::LogLevel::kError,
               "cannot create the event loop: " + linux_platform.error().message);
    if (detached) detached->reportStarted(kExitFailure);
    return kExitFailure;
  }
  director::DirectorOptions options;
  options.config_path = path;
  options.node_name = node_name;
  options.failback_override = failback;
  options.version = TANDEM_VERSION;
  options.watchdog_period = platform::SystemdNotifier::watchdogPeriod();
  if (detached) options.main_pid = static_cast<int>(::getpid());

  int exit_code = kExitOk;
  {
    director::Director director(**linux_platform, options);
    auto started = director.start();
    if (!started) exit_code = kExitFailure;
    if (detached) {
      if (started) logger.stopLoggingToStderr();
      detached->reportStarted(exit_code);
    }
    if (started) (*linux_platform)->dispatcher().run();
  }
  logger.log(platform::LogLevel::kInfo, "tandemd exiting code=" + std::to_string(exit_code));
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tandemd: the tandem director daemon", "tandemd"};
  std::string config_path(tandem::config::kDefaultConfigPath);
  bool foreground = false;
  bool check_only = false;
  std::string node_name;
  std::string failback;
  app.add_option("-c,--config", config_path, "the config file")->capture_default_str();
  app.add_flag("-f,--foreground", foreground,
               "stay in the foreground and log to stderr (systemd units use this)");
  app.add_flag("--check-config", check_only,
               "load and validate the config, print its diagnostics, exit 0 if it is usable");
  app.add_option("--node", node_name,
                 "this director's [[node]] name (default: the host name, as corosync uses)")
      ->envname("TANDEM_NODE");
  app.add_option("--failback", failback,
                 "impose this failback policy over the config file's: auto, manual or "
                 "delayed:DURATION (the unit's environment file sets it)")
      ->envname("TANDEM_FAILBACK");
  app.set_version_flag("--version", "tandemd " TANDEM_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (check_only) return checkConfig(config_path, failback);
  if (node_name.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    node_name = host;
    if (auto dot = node_name.find('.'); dot != std::string::npos) node_name.resize(dot);
  }
  return runDaemon(config_path, foreground, node_name, failback);
}
