#include "tandemd/daemon.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "config/config_loader.h"

namespace tandem::tandemd {

namespace {

// A log value, quoted when it would otherwise break key=value parsing.
std::string kv(std::string_view key, std::string_view value) {
  bool plain = !value.empty() && value.find_first_of(" \t\"=") == std::string_view::npos;
  std::string out(key);
  out += '=';
  if (plain) return out.append(value);
  out += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out += '"';
}

std::string kv(std::string_view key, uint64_t value) { return kv(key, std::to_string(value)); }

std::string plural(size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

}  // namespace

Daemon::Daemon(loop::Dispatcher& dispatcher, Notifier& notifier, Logger& logger,
               const config::FileSystem& files, DaemonOptions options)
    : dispatcher_(dispatcher),
      notifier_(notifier),
      logger_(logger),
      files_(files),
      options_(std::move(options)) {}

Result<void> Daemon::start() {
  config::LoadResult loaded = config::loadConfigFile(options_.config_path, files_);
  logDiagnostics(loaded.diagnostics);
  if (!loaded.ok()) {
    int errors = loaded.diagnostics.errorCount();
    logger_.log(LogLevel::kError, "config rejected, not starting " +
                                      kv("file", options_.config_path) + " " +
                                      kv("errors", static_cast<uint64_t>(errors)));
    notifier_.notify("STATUS=Not started: " + plural(static_cast<size_t>(errors), "error") +
                     " in " + options_.config_path);
    return fail(ErrorCode::kInvalidArgument,
                options_.config_path + " has " + plural(static_cast<size_t>(errors), "error"));
  }
  config_ = std::move(loaded.config);
  generation_ = 1;
  applyLogLevel();

  const std::pair<loop::Signal, std::function<void()>> handlers[] = {
      {loop::Signal::kTerminate, [this] { stop(loop::Signal::kTerminate); }},
      {loop::Signal::kInterrupt, [this] { stop(loop::Signal::kInterrupt); }},
      {loop::Signal::kHangup, [this] { reload(); }},
  };
  for (const auto& [sig, handler] : handlers) {
    auto watch = dispatcher_.onSignal(sig, handler);
    if (!watch) return fail(watch.error());
    signal_watches_.push_back(std::move(*watch));
  }

  std::string started = "started " + kv("file", options_.config_path) + " " + runningContext();
  if (options_.watchdog_period) {
    // Half the period leaves the other half for a late loop iteration, as sd_watchdog_enabled(3)
    // recommends.
    watchdog_interval_ = std::max(*options_.watchdog_period / 2, Millis(1));
    watchdog_timer_ = dispatcher_.createTimer([this] { pingWatchdog(); });
    watchdog_timer_->arm(watchdog_interval_);
    started += " " + kv("watchdog", formatDuration(*options_.watchdog_period));
  }
  logger_.log(LogLevel::kNotice, started);

  std::string ready = "READY=1\nSTATUS=Running " + describeRunning();
  if (options_.main_pid) ready += "\nMAINPID=" + std::to_string(*options_.main_pid);
  notifier_.notify(ready);
  return {};
}

void Daemon::reload() {
  if (stopping_) return;
  logger_.log(LogLevel::kNotice, "reload requested signal=HUP " + kv("file", options_.config_path));
  // Type=notify-reload (systemd 253+) wants MONOTONIC_USEC= with RELOADING=1 to tell this reload
  // from an older one; 252 ignores it.
  auto usec =
      std::chrono::duration_cast<std::chrono::microseconds>(dispatcher_.now().time_since_epoch());
  notifier_.notify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec.count()));

  config::LoadResult loaded = config::loadConfigFile(options_.config_path, files_);
  logDiagnostics(loaded.diagnostics);
  if (!loaded.ok()) {
    auto errors = static_cast<size_t>(loaded.diagnostics.errorCount());
    logger_.log(LogLevel::kError, "config reload rejected " + kv("file", options_.config_path) +
                                      " " + kv("errors", errors) + " " +
                                      kv("kept_generation", generation_));
    // READY=1 ends the reload in systemd's eyes: the daemon is running, on the old config.
    notifier_.notify("READY=1\nSTATUS=Reload rejected (" + plural(errors, "error") + " in " +
                     options_.config_path + "), keeping " + describeRunning());
    return;
  }
  config_ = std::move(loaded.config);
  ++generation_;
  applyLogLevel();
  logger_.log(LogLevel::kNotice, "config reloaded " + runningContext());
  notifier_.notify("READY=1\nSTATUS=Running " + describeRunning());
}

void Daemon::stop(loop::Signal why) {
  std::string signal = "SIG" + std::string(loop::signalName(why));
  if (stopping_) {
    logger_.log(LogLevel::kInfo, "already stopping " + kv("signal", signal));
    return;
  }
  stopping_ = true;
  logger_.log(LogLevel::kNotice, "stopping " + kv("signal", signal));
  notifier_.notify("STOPPING=1\nSTATUS=Stopping on " + signal);
  if (watchdog_timer_) watchdog_timer_->cancel();
  dispatcher_.stop();
}

void Daemon::pingWatchdog() {
  notifier_.notify("WATCHDOG=1");
  watchdog_timer_->arm(watchdog_interval_);
}

void Daemon::logDiagnostics(const config::Diagnostics& diagnostics) {
  for (const config::Diagnostic& d : diagnostics.sorted()) {
    logger_.log(
        d.severity == config::Diagnostic::Severity::kError ? LogLevel::kError : LogLevel::kWarning,
        d.format());
  }
}

void Daemon::applyLogLevel() {
  // The loader accepts only known level names, so a miss here keeps the current level.
  if (auto level = parseLogLevel(config_->daemon.log_level)) logger_.setLevel(*level);
}

std::string Daemon::describeRunning() const {
  return "config generation " + std::to_string(generation_) + ": cluster " + config_->cluster.name +
         ", " + plural(config_->nodes.size(), "node");
}

std::string Daemon::runningContext() const {
  return kv("generation", generation_) + " " + kv("cluster", config_->cluster.name) + " " +
         kv("nodes", config_->nodes.size()) + " " + kv("vips", config_->vips.size()) + " " +
         kv("services", config_->virtual_servers.size());
}

}  // namespace tandem::tandemd
