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
  if (options_.check_kernel_settings) options_.check_kernel_settings(*config_);

  const std::pair<loop::Signal, std::function<void()>> handlers[] = {
      {loop::Signal::kTerminate, [this] { stop(loop::Signal::kTerminate); }},
      {loop::Signal::kInterrupt, [this] { stop(loop::Signal::kInterrupt); }},
      {loop::Signal::kHangup, [this] { reloadConfig(); }},
  };
  for (const auto& [sig, handler] : handlers) {
    auto watch = dispatcher_.onSignal(sig, handler);
    if (!watch) return fail(watch.error());
    signal_watches_.push_back(std::move(*watch));
  }

  // The IPVS table first and on every director: it is ready before an election makes this
  // node ACTIVE.
  if (options_.open_ipvs) {
    ipvs_ = std::make_unique<IpvsManager>(dispatcher_, logger_, options_.open_ipvs,
                                          options_.open_ipvs_owned);
    ipvs_->configure(*config_);
  }

  if (options_.make_cluster) {
    auto node = options_.make_cluster(*config_);
    if (!node) {
      logger_.log(LogLevel::kError, "cannot join the cluster: " + node.error().message);
      notifier_.notify("STATUS=Not started: " + node.error().message);
      return fail(node.error());
    }
    cluster_ = std::move(*node);
    if (auto s = cluster_->start(); !s) {
      logger_.log(LogLevel::kError, "cannot join the cluster: " + s.error().message);
      return fail(s.error());
    }
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

void Daemon::reloadConfig() {
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
  if (options_.check_kernel_settings) options_.check_kernel_settings(*config_);
  if (ipvs_) ipvs_->configure(*config_);
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
  if (cluster_ && election::holdsResources(cluster_->role())) {
    // A clean stop is a planned handover: release in reverse order and tell the peers, so the
    // next ACTIVE takes over at once instead of after dead_time.
    logger_.log(LogLevel::kNotice, "handing over before stopping " +
                                       kv("timeout", formatDuration(options_.stop_timeout)));
    cluster_->setStandby(true);
    stop_deadline_ = dispatcher_.now() + options_.stop_timeout;
    stop_timer_ = dispatcher_.createTimer([this] {
      if (!election::holdsResources(cluster_->role()) || dispatcher_.now() >= stop_deadline_) {
        finishStop();
      } else {
        stop_timer_->arm(Millis(20));
      }
    });
    stop_timer_->arm(Millis(20));
    return;
  }
  finishStop();
}

void Daemon::finishStop() {
  if (watchdog_timer_) watchdog_timer_->cancel();
  dispatcher_.stop();
}

nlohmann::json Daemon::status() {
  if (!cluster_) {
    return {{"cluster", config_ ? config_->cluster.name : ""},
            {"local_node", nullptr},
            {"active", nullptr},
            {"quorate", false},
            {"nodes", nlohmann::json::array()}};
  }
  ipc::FrameStats stats;
  const wire::FrameCounters& c = cluster_->frameCounters();
  stats.accepted = c.accepted;
  for (wire::Rejection r : wire::kAllRejections)
    stats.rejected[std::string(wire::name(r))] = c.of(r);
  nlohmann::json j = ipc::statusJson(cluster_->clusterName(), cluster_->status(), stats);
  j["config_generation"] = generation_;
  j["resources"] = cluster_->resourcesJson();
  return j;
}

Result<nlohmann::json> Daemon::standby(const std::string& node, bool on) {
  if (!cluster_) return fail(ErrorCode::kUnavailable, "this tandemd runs without a cluster");
  std::string self = cluster_->status().local_node;
  if (!node.empty() && node != self) {
    return fail(ErrorCode::kInvalidArgument,
                "this is " + self + "; put " + node + " in standby on " + node + " itself");
  }
  logger_.log(LogLevel::kNotice,
              std::string("operator standby ") + (on ? "on" : "off") + " " + kv("node", self));
  cluster_->setStandby(on);
  return nlohmann::json{{"node", self}, {"standby", on}};
}

Result<nlohmann::json> Daemon::move(const std::string& target) {
  if (!cluster_) return fail(ErrorCode::kUnavailable, "this tandemd runs without a cluster");
  if (!target.empty() && !config_->findNode(target)) {
    return fail(ErrorCode::kInvalidArgument,
                "\"" + target + "\" is not a [[node]] in " + options_.config_path);
  }
  logger_.log(LogLevel::kNotice, "operator move " + kv("target", target.empty() ? "-" : target));
  cluster_->move(target);
  return nlohmann::json{
      {"target", target.empty() ? nlohmann::json(nullptr) : nlohmann::json(target)}};
}

Result<nlohmann::json> Daemon::clear() {
  if (!cluster_) return fail(ErrorCode::kUnavailable, "this tandemd runs without a cluster");
  cluster_->clearFailures();
  cluster_->move("");
  return nlohmann::json{{"cleared", true}};
}

Result<nlohmann::json> Daemon::reload() {
  uint64_t before = generation_;
  reloadConfig();
  return nlohmann::json{{"generation", generation_}, {"accepted", generation_ != before}};
}

Result<nlohmann::json> Daemon::ipvs() {
  if (!ipvs_) return fail(ErrorCode::kUnavailable, "this tandemd runs without IPVS");
  return ipvs_->show();
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
