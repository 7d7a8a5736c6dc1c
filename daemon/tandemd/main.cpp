// tandemd: the tandem director daemon. This file is the shell: it parses the command line,
// builds the real OS pieces (qb_loop, sd_notify, qb_log, the file system) and hands them to
// Daemon, which holds all the behaviour.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "config/config_loader.h"
#include "loop/qb_dispatcher.h"
#include "tandemd/daemon.h"
#include "tandemd/daemonize.h"
#include "tandemd/qb_logger.h"
#include "tandemd/systemd_notifier.h"

namespace {

using namespace tandem;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // invalid config, or the daemon could not start
constexpr int kExitUsage = 2;

int checkConfig(const std::string& path) {
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

int runDaemon(std::string path, bool foreground) {
  // Reloads re-read the path after the daemon has left the directory it was started in.
  std::error_code ec;
  if (auto abs = std::filesystem::absolute(path, ec); !ec) path = abs.lexically_normal().string();

  tandemd::QbLogger logger(/*to_stderr=*/true);
  std::optional<tandemd::DetachedProcess> detached;
  if (!foreground) {
    auto d = tandemd::daemonize();
    if (!d) {
      logger.log(tandemd::LogLevel::kError, "cannot daemonize: " + d.error().message);
      return kExitFailure;
    }
    detached.emplace(std::move(*d));
  }
  logger.log(tandemd::LogLevel::kInfo, "tandemd " TANDEM_VERSION " starting pid=" +
                                           std::to_string(::getpid()) + " config=" + path);

  auto dispatcher = loop::QbDispatcher::create();
  if (!dispatcher) {
    logger.log(tandemd::LogLevel::kError,
               "cannot create the event loop: " + dispatcher.error().message);
    if (detached) detached->reportStarted(kExitFailure);
    return kExitFailure;
  }
  tandemd::SystemdNotifier notifier(logger);
  config::PosixFileSystem files;
  tandemd::DaemonOptions options;
  options.config_path = path;
  options.watchdog_period = tandemd::SystemdNotifier::watchdogPeriod();
  if (detached) options.main_pid = static_cast<int>(::getpid());

  int exit_code = kExitOk;
  {
    tandemd::Daemon daemon(**dispatcher, notifier, logger, files, options);
    auto started = daemon.start();
    if (!started) exit_code = kExitFailure;
    if (detached) {
      if (started) logger.stopLoggingToStderr();
      detached->reportStarted(exit_code);
    }
    if (started) (*dispatcher)->run();
  }
  logger.log(tandemd::LogLevel::kInfo,
             "tandemd exiting " + std::string("code=") + std::to_string(exit_code));
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tandemd: the tandem director daemon", "tandemd"};
  std::string config_path(tandem::config::kDefaultConfigPath);
  bool foreground = false;
  bool check_only = false;
  app.add_option("-c,--config", config_path, "the config file")->capture_default_str();
  app.add_flag("-f,--foreground", foreground,
               "stay in the foreground and log to stderr (systemd units use this)");
  app.add_flag("--check-config", check_only,
               "load and validate the config, print its diagnostics, exit 0 if it is usable");
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
  if (check_only) return checkConfig(config_path);
  return runDaemon(config_path, foreground);
}
