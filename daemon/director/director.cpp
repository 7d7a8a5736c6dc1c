#include "director/director.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "config/config_loader.h"
#include "director/subsystem_registry.h"

namespace tandem::director {

namespace {

using platform::LogLevel;

std::string plural(size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

}  // namespace

Director::Director(platform::Platform& platform, DirectorOptions options)
    : platform_(platform), options_(std::move(options)) {}

Director::~Director() {
  // Reverse of construction: the registry's parts, then the cluster that held their resources.
  admin_.reset();
  cluster_.reset();
  for (auto it = subsystems_.rbegin(); it != subsystems_.rend(); ++it) (*it)->shutdown();
  subsystems_.clear();
}

void Director::add(std::string name, resources::CommandHandler handler) {
  commands_[std::move(name)] = std::move(handler);
}

Result<nlohmann::json> Director::command(const std::string& name, const nlohmann::json& args) {
  auto it = commands_.find(name);
  if (it == commands_.end()) {
    return fail(ErrorCode::kUnavailable, name == "ipvs" ? "this tandemd does not manage IPVS"
                                         : name == "sync"
                                             ? "this tandemd does not run connection sync"
                                             : "this tandemd runs without a cluster");
  }
  return it->second(args);
}

resources::Subsystem* Director::subsystem(std::string_view name) {
  if (cluster_ && cluster_->name() == name) return cluster_.get();
  for (auto& s : subsystems_) {
    if (s->name() == name) return s.get();
  }
  return nullptr;
}

Result<void> Director::start() {
  platform::Logger& logger = platform_.logger();
  platform::Notifier& notifier = platform_.notifier();
  if (!options_.failback_override.empty()) {
    auto o = config::parseFailbackOverride(options_.failback_override);
    if (!o) {
      logger.log(LogLevel::kError, o.error().message);
      notifier.notify("STATUS=Not started: bad TANDEM_FAILBACK \"" + options_.failback_override +
                      "\"");
      return fail(o.error());
    }
    failback_override_ = *o;
  }
  config::FailbackSetting file_failback;
  config::LoadResult loaded = loadConfig(&file_failback);
  logDiagnostics(loaded.diagnostics);
  if (!loaded.ok()) {
    int errors = loaded.diagnostics.errorCount();
    logger.log(LogLevel::kError, "config rejected, not starting " +
                                     kv("file", options_.config_path) + " " +
                                     kv("errors", static_cast<uint64_t>(errors)));
    notifier.notify("STATUS=Not started: " + plural(static_cast<size_t>(errors), "error") + " in " +
                    options_.config_path);
    return fail(ErrorCode::kInvalidArgument,
                options_.config_path + " has " + plural(static_cast<size_t>(errors), "error"));
  }
  config_ = std::move(loaded.config);
  failback_file_ = file_failback;
  config_text_ = std::move(loaded.text);
  generation_ = 1;
  if (options_.with_cluster) loadHistory();
  record({0, "start", "tandemd started", "", std::nullopt});
  applyLogLevel();

  const std::pair<loop::Signal, std::function<void()>> handlers[] = {
      {loop::Signal::kTerminate, [this] { stop("SIGTERM"); }},
      {loop::Signal::kInterrupt, [this] { stop("SIGINT"); }},
      {loop::Signal::kHangup, [this] { reloadConfig(); }},
  };
  for (const auto& [sig, handler] : handlers) {
    auto watch = platform_.dispatcher().onSignal(sig, handler);
    if (!watch) return fail(watch.error());
    signal_watches_.push_back(std::move(*watch));
  }

  if (options_.with_cluster) {
    cluster_ = std::make_unique<ClusterSubsystem>(
        platform_, options_.node_name, [this](election::Role r) { onRole(r); },
        [this](const election::RoleChange& c) { onRoleChange(c); });
    SubsystemLinks links;
    links.service_health = [this](int permille) { cluster_->setServiceHealth(permille); };
    links.sync_state = [this](const SyncReport& sync) { cluster_->setSyncState(sync); };
    links.health_event = [this](const resources::health::HealthEvent& e) {
      record({e.at_ms, "real-server",
              e.virtual_server + " " + e.real_server.toString() + (e.up ? " up" : " down"),
              e.check + ": " + e.reason, std::nullopt});
      journal(JournalKind::kRealServer, e.up ? LogLevel::kNotice : LogLevel::kWarning,
              std::string("real server ") + (e.up ? "up " : "down ") + kv("vs", e.virtual_server) +
                  " " + kv("rs", e.real_server.toString()) + " " +
                  kv("reason", e.check + ": " + e.reason),
              {{"TANDEM_VS", e.virtual_server},
               {"TANDEM_RS", e.real_server.toString()},
               {"TANDEM_HEALTH", e.up ? "up" : "down"},
               {"TANDEM_REASON", e.check + ": " + e.reason}});
    };
    DrainHooks drains;
    subsystems_ = buildSubsystems(platform_, options_.node_name, std::move(links), &drains);
    cluster_->setDrainHooks(std::move(drains));
  }
  Result<void> prepared = prepareAll(nullptr);
  const config::ReloadDiff none;
  if (prepared) {
    for (resources::Subsystem* s : parts()) {
      s->configure(*config_, nullptr, none);
      s->registerCommands(*this);
    }
    if (cluster_) applyHeld();
    for (resources::Subsystem* s : parts()) {
      if (auto st = s->start(); !st) {
        prepared = fail(st.error());
        break;
      }
    }
  }
  if (prepared && options_.with_cluster) {
    auto admin = platform_.serveAdmin(
        *this, platform::AdminServerOptions{config_->control.ipc_name, config_->control.group});
    if (!admin) {
      prepared = fail(admin.error().code, "cannot serve `tandem`: " + admin.error().message);
    } else {
      admin_ = std::move(*admin);
    }
  }
  if (prepared && options_.with_cluster) {
    auto endpoint = openMetrics(config_->metrics);
    if (!endpoint) {
      prepared = fail(endpoint.error());
    } else {
      setMetrics(std::move(*endpoint));
    }
  }
  if (!prepared) {
    logger.log(LogLevel::kError, "cannot start: " + prepared.error().message);
    notifier.notify("STATUS=Not started: " + prepared.error().message);
    return fail(prepared.error());
  }
  started_ = true;

  std::string started = "started " + kv("file", options_.config_path) + " " + runningContext();
  if (options_.watchdog_period) {
    // Half the period leaves the other half for a late loop iteration, as sd_watchdog_enabled(3)
    // recommends.
    watchdog_interval_ = std::max(*options_.watchdog_period / 2, Millis(1));
    watchdog_timer_ = platform_.dispatcher().createTimer([this] { pingWatchdog(); });
    watchdog_timer_->arm(watchdog_interval_);
    started += " " + kv("watchdog", formatDuration(*options_.watchdog_period));
  }
  logger.log(LogLevel::kNotice, started);

  std::string ready = "READY=1\nSTATUS=Running " + describeRunning();
  if (options_.main_pid) ready += "\nMAINPID=" + std::to_string(*options_.main_pid);
  notifier.notify(ready);
  journal(JournalKind::kStart, LogLevel::kNotice, started,
          {{"TANDEM_CONFIG", options_.config_path},
           {"TANDEM_GENERATION", std::to_string(generation_)}});
  return {};
}

std::vector<resources::Subsystem*> Director::parts() {
  std::vector<resources::Subsystem*> all;
  if (cluster_) all.push_back(cluster_.get());
  for (auto& s : subsystems_) all.push_back(s.get());
  return all;
}

Result<void> Director::prepareAll(const config::Config* next) {
  // At start the running config is the one being prepared; at reload, the new one is.
  const config::Config& cfg = next ? *next : *config_;
  const config::Config* running = next ? &*config_ : nullptr;
  for (resources::Subsystem* s : parts()) {
    if (auto p = s->prepare(cfg, running); !p) {
      return fail(p.error().code, std::string(s->name()) + ": " + p.error().message);
    }
  }
  return {};
}

void Director::applyHeld() {
  std::vector<resources::HeldResource> held;
  auto collect = [&held](resources::Subsystem& s) {
    for (auto& h : s.held()) {
      if (h.resource) held.push_back(std::move(h));
    }
  };
  for (resources::Subsystem* s : parts()) collect(*s);
  cluster_->setResources(resources::inTakeoverOrder(std::move(held)));
}

// Each change as the core made it (onRole hears only the role an event ended in): the journal
// record and the subsystems that act on every step (the notify hooks).
void Director::onRoleChange(const election::RoleChange& c) {
  const std::string from(election::roleName(c.from));
  const std::string to(election::roleName(c.to));
  journal(JournalKind::kRole, LogLevel::kNotice,
          "role " + to + " " + kv("previous", from) + " " +
              kv("event", election::roleEventName(c.event)) + " " + kv("reason", c.reason),
          {{"TANDEM_ROLE", to},
           {"TANDEM_PREVIOUS_ROLE", from},
           {"TANDEM_ROLE_EVENT", std::string(election::roleEventName(c.event))},
           {"TANDEM_REASON", c.reason},
           {"TANDEM_EPOCH", std::to_string(c.epoch)}});
  for (auto& s : subsystems_) s->onRoleChange(c);
}

void Director::onRole(election::Role role) {
  for (auto& s : subsystems_) s->onRole(role);
  const std::string reason = clusterNode() ? clusterNode()->lastReason() : "";
  record(
      {0, "role",
       std::string(election::roleName(last_role_)) + " -> " + std::string(election::roleName(role)),
       reason, std::nullopt});
  // The core counts takeovers (TAKING_OVER to ACTIVE after an election, not a restart's
  // resume): roles reached within one event come here as the last one only, so a cold start
  // that is elected at once reports INIT -> ACTIVE.
  cluster::ClusterNode* node = clusterNode();
  if (node != nullptr && node->takeovers() > takeovers_) {
    takeovers_ = node->takeovers();
    const Millis took = node->lastTakeover().value_or(Millis(0));
    record({0, "takeover", "took over the services", reason, took.count()});
    std::vector<std::pair<std::string, std::string>> fields{
        {"TANDEM_DURATION_MS", std::to_string(took.count())}, {"TANDEM_REASON", reason}};
    for (const std::string& vip : myVips()) fields.emplace_back("TANDEM_VIP", vip);
    journal(JournalKind::kTakeover, LogLevel::kNotice,
            "took over the services " + kv("took_ms", static_cast<uint64_t>(took.count())) + " " +
                kv("reason", reason),
            std::move(fields));
  }
  last_role_ = role;
}

void Director::setMetrics(std::unique_ptr<platform::Handle> endpoint) {
  metrics_ = std::move(endpoint);
  // The loop's lag is measured only while someone can read it: a timer 10 times a second.
  if (!metrics_) {
    loop_lag_.reset();
  } else if (!loop_lag_) {
    loop_lag_ = std::make_unique<metrics::LoopLag>(platform_.dispatcher());
  }
}

Result<std::unique_ptr<platform::Handle>> Director::openMetrics(const config::Metrics& next) {
  if (!next.enabled) return std::unique_ptr<platform::Handle>();
  auto scrape = [this](metrics::Format format) { return this->scrape(format); };
  auto opened = platform_.serveMetrics(next.listen, scrape);
  if (!opened && metrics_ && config_ && config_->metrics.enabled &&
      config_->metrics.listen.port == next.listen.port) {
    // The running endpoint may hold the port (0.0.0.0:9474 to 127.0.0.1:9474): without it,
    // once more; failing that, it comes back.
    metrics_.reset();
    opened = platform_.serveMetrics(next.listen, scrape);
    if (!opened) {
      auto back = platform_.serveMetrics(config_->metrics.listen, scrape);
      if (back) {
        metrics_ = std::move(*back);
      } else {
        platform_.logger().log(LogLevel::kError,
                               "the metrics endpoint is closed: " + back.error().message);
      }
    }
  }
  if (!opened) return fail(opened.error().code, "metrics: " + opened.error().message);
  platform_.logger().log(LogLevel::kInfo, "metrics served " + kv("listen", next.listen.toString()));
  return std::move(*opened);
}

std::string Director::scrape(metrics::Format format) {
  metrics::Exposition out(format, last_scrape_size_ + last_scrape_size_ / 8);
  writeMetrics(out);
  for (resources::Subsystem* s : parts()) s->writeMetrics(out);
  last_scrape_size_ = out.size();
  return out.finish();
}

void Director::writeMetrics(metrics::Exposition& out) const {
  using metrics::labelSet;
  using metrics::Type;
  const cluster::ClusterNode* node = cluster_ ? cluster_->node() : nullptr;
  out.family("tandem_info", Type::kGauge, "Always 1: who this director is");
  out.sample(labelSet({{"node", options_.node_name},
                       {"cluster", config_ ? config_->cluster.name : ""},
                       {"version", options_.version}}),
             1.0);
  out.counter("tandem_takeovers", "Takeovers this director completed (TAKING_OVER to ACTIVE)",
              node != nullptr ? node->takeovers() : 0);
  if (const auto last = node ? node->lastTakeover() : std::nullopt) {
    out.gauge("tandem_takeover_last_duration_seconds", "How long the last takeover took",
              static_cast<double>(last->count()) / 1000.0, "seconds");
  }
  if (loop_lag_) {
    out.family("tandem_loop_lag_seconds", Type::kHistogram, "How late the event loop ran a timer",
               "seconds");
    out.histogram("", loop_lag_->histogram());
  }
  const metrics::ProcessStats p = platform_.processStats();
  out.family("process_cpu_seconds", Type::kCounter, "CPU time, user and system", "seconds");
  out.sample("", p.cpu_seconds);
  out.gauge("process_resident_memory_bytes", "Resident memory",
            static_cast<double>(p.resident_bytes), "bytes");
  out.gauge("process_open_fds", "Open file descriptors", static_cast<double>(p.open_fds));
  out.gauge("process_start_time_seconds", "Start time, since the Unix epoch", p.start_time_seconds,
            "seconds");
}

void Director::record(HistoryEntry entry) {
  if (entry.at_ms == 0) entry.at_ms = platform_.wallClockMs();
  history_.add(std::move(entry));
  if (!config_) return;
  if (!history_timer_) {
    history_timer_ = platform_.dispatcher().createTimer([this] { persistHistory(); });
  }
  // A burst (a storm of real-server transitions) costs one write a second.
  if (!history_timer_->armed()) history_timer_->arm(Millis(1000));
}

void Director::loadHistory() {
  const std::string path = config_->daemon.state_dir + "/history";
  auto text = platform_.stateFiles().read(path);
  if (!text) {
    platform_.logger().log(LogLevel::kWarning,
                           "history not read, starting a new one: " + text.error().message);
    return;
  }
  if (!*text) return;
  size_t skipped = 0;
  History kept = History::parse(**text, History::kDefaultCapacity, &skipped);
  for (const HistoryEntry& e : history_.entries()) kept.add(e);  // what this run already saw
  history_ = std::move(kept);
  if (skipped > 0) {
    platform_.logger().log(LogLevel::kWarning, path + ": skipped " + plural(skipped, "line") +
                                                   " that are not history entries");
  }
}

void Director::persistHistory() {
  if (!config_) return;
  const std::string path = config_->daemon.state_dir + "/history";
  if (auto w = platform_.stateFiles().write(path, history_.serialize()); !w) {
    platform_.logger().log(LogLevel::kWarning, "cannot keep the history: " + w.error().message);
  }
}

Result<nlohmann::json> Director::explain() {
  cluster::ClusterNode* node = clusterNode();
  if (node == nullptr)
    return fail(ErrorCode::kUnavailable, "this tandemd has not joined the cluster yet");
  const auto e = node->explain();
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& c : e.candidates) {
    candidates.push_back({{"name", c.name}, {"eligible", c.eligible}, {"why_not", c.why_not}});
  }
  return nlohmann::json{
      {"node", options_.node_name},
      {"active", e.active ? nlohmann::json(*e.active) : nlohmann::json(nullptr)},
      {"why_active", e.why_active},
      {"candidates", std::move(candidates)},
      {"successor", e.successor ? nlohmann::json(*e.successor) : nlohmann::json(nullptr)},
      {"if_active_fails", e.if_active_fails},
      {"maintenance", node->maintenance()}};
}

Result<nlohmann::json> Director::history(uint64_t since_ms) {
  nlohmann::json entries = nlohmann::json::array();
  for (const HistoryEntry& e : history_.since(since_ms)) entries.push_back(toJson(e));
  return nlohmann::json{{"node", options_.node_name},
                        {"capacity", History::kDefaultCapacity},
                        {"entries", std::move(entries)}};
}

void Director::audited(const std::string& request, const std::string& who, const std::string& body,
                       const std::string& result) {
  record({0, "admin", request + " " + body, who + " result=" + result, std::nullopt});
  journal(JournalKind::kAdmin, LogLevel::kNotice,
          "admin " + kv("request", request) + " " + kv("by", who) + " " + kv("result", result),
          {{"TANDEM_REQUEST", request},
           {"TANDEM_ARGS", body},
           {"TANDEM_USER", who},
           {"TANDEM_RESULT", result}});
}

void Director::journal(JournalKind kind, LogLevel level, std::string line,
                       std::vector<std::pair<std::string, std::string>> fields) {
  fields.insert(fields.begin(), {"TANDEM_NODE", options_.node_name});
  if (config_) fields.insert(fields.begin() + 1, {"TANDEM_CLUSTER", config_->cluster.name});
  platform_.logger().event(JournalEvent{kind, level, std::move(line), std::move(fields)});
}

std::vector<std::string> Director::myVips() const {
  std::vector<std::string> out;
  if (!config_) return out;
  const config::Node* self = config_->findNode(options_.node_name);
  for (const config::Vip& v : config_->vips) {
    if (self == nullptr || std::find(self->interfaces.begin(), self->interfaces.end(),
                                     v.interface) != self->interfaces.end()) {
      out.push_back(v.address.toString());
    }
  }
  return out;
}

void Director::refuseReload(const std::string& why, size_t errors) {
  // READY=1 ends the reload in systemd's eyes: the daemon is running, on the old config.
  if (errors > 0) {
    platform_.logger().log(LogLevel::kError,
                           "config reload rejected " + kv("file", options_.config_path) + " " +
                               kv("errors", errors) + " " + kv("kept_generation", generation_));
    platform_.notifier().notify("READY=1\nSTATUS=Reload rejected (" + plural(errors, "error") +
                                " in " + options_.config_path + "), keeping " + describeRunning());
    return;
  }
  platform_.logger().log(LogLevel::kError, "config reload refused " +
                                               kv("file", options_.config_path) + " " +
                                               kv("kept_generation", generation_) + ": " + why);
  platform_.notifier().notify("READY=1\nSTATUS=Reload refused (" + why + "), keeping " +
                              describeRunning());
}

void Director::reloadConfig() {
  if (stopping_ || !started_) return;
  platform::Logger& logger = platform_.logger();
  logger.log(LogLevel::kNotice, "reload requested " + kv("file", options_.config_path));
  // Type=notify-reload (systemd 253+) wants MONOTONIC_USEC= with RELOADING=1 to tell this reload
  // from an older one; 252 ignores it.
  auto usec = std::chrono::duration_cast<std::chrono::microseconds>(
      platform_.dispatcher().now().time_since_epoch());
  platform_.notifier().notify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec.count()));

  config::FailbackSetting file_failback;
  config::LoadResult loaded = loadConfig(&file_failback);
  logDiagnostics(loaded.diagnostics);
  if (!loaded.ok()) {
    auto errors = static_cast<size_t>(loaded.diagnostics.errorCount());
    last_reload_.reset();
    refuseReload(plural(errors, "error") + " in the file", errors);
    return;
  }
  config::Config next = std::move(*loaded.config);
  config::ReloadDiff diff = config::diffReload(*config_, next, options_.node_name);
  last_reload_ = diff;
  if (!diff.accepted()) {
    for (const config::Refusal& r : diff.refused) logger.log(LogLevel::kError, r.format());
    std::string keys;
    for (const config::Refusal& r : diff.refused) keys += (keys.empty() ? "" : ", ") + r.key;
    refuseReload(keys + " cannot change while tandemd runs", 0);
    return;
  }
  // Everything that can fail is tried before anything changes.
  if (auto p = prepareAll(&next); !p) {
    refuseReload(p.error().message, 0);
    return;
  }
  std::optional<std::unique_ptr<platform::Handle>> endpoint;
  if (started_ && options_.with_cluster && diff.changed("metrics")) {
    auto opened = openMetrics(next.metrics);
    if (!opened) {
      refuseReload(opened.error().message, 0);
      return;
    }
    endpoint = std::move(*opened);
  }
  if (admin_ && diff.changed("control")) {
    if (auto g = admin_->setGroup(next.control.group); !g) {
      // The new endpoint goes; the running one, if opening the new one had to close it (the
      // same port), comes back.
      endpoint.reset();
      if (!metrics_ && config_->metrics.enabled) {
        if (auto back = openMetrics(config_->metrics)) metrics_ = std::move(*back);
      }
      refuseReload("control.group: " + g.error().message, 0);
      return;
    }
  }
  if (endpoint) setMetrics(std::move(*endpoint));
  const config::Config running = std::move(*config_);
  config_ = std::move(next);
  failback_file_ = file_failback;
  config_text_ = std::move(loaded.text);
  ++generation_;
  applyLogLevel();
  for (resources::Subsystem* s : parts()) s->configure(*config_, &running, diff);
  if (cluster_) applyHeld();
  logger.log(LogLevel::kNotice,
             "config reloaded " + runningContext() + " " + kv("changed", diff.changedSections()));
  for (const config::SectionChange& c : diff.changes) {
    logger.log(LogLevel::kNotice, "reload " + c.format());
  }
  platform_.notifier().notify("READY=1\nSTATUS=Running " + describeRunning() +
                              " (reloaded: " + diff.changedSections() + ")");
}

void Director::stop(const std::string& why) {
  platform::Logger& logger = platform_.logger();
  if (stopping_) {
    logger.log(LogLevel::kInfo, "already stopping " + kv("signal", why));
    return;
  }
  stopping_ = true;
  logger.log(LogLevel::kNotice, "stopping " + kv("signal", why));
  platform_.notifier().notify("STOPPING=1\nSTATUS=Stopping on " + why);
  cluster::ClusterNode* node = clusterNode();
  if (node && node->maintenance() && election::holdsResources(node->role())) {
    // Maintenance mode: nothing is stopped. The peers act on nothing either, and a tandemd
    // started again resumes what this one held.
    logger.log(LogLevel::kNotice,
               "maintenance mode: stopping without handing over; the resources stay in place");
    finishStop();
    return;
  }
  if (node && election::holdsResources(node->role())) {
    // A clean stop is a planned handover: release in reverse order and tell the peers, so the
    // next ACTIVE takes over at once instead of after dead_time.
    logger.log(LogLevel::kNotice, "handing over before stopping " +
                                      kv("timeout", formatDuration(options_.stop_timeout)));
    node->setStandby(true);
    stop_deadline_ = platform_.dispatcher().now() + options_.stop_timeout;
    stop_timer_ = platform_.dispatcher().createTimer([this] {
      cluster::ClusterNode* n = clusterNode();
      if (!n || !election::holdsResources(n->role()) ||
          platform_.dispatcher().now() >= stop_deadline_) {
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

void Director::finishStop() {
  if (history_timer_ && history_timer_->armed()) {
    history_timer_->cancel();
    persistHistory();
  }
  if (watchdog_timer_) watchdog_timer_->cancel();
  platform_.dispatcher().stop();
}

nlohmann::json Director::status() {
  nlohmann::json j = cluster_ ? cluster_->status() : nlohmann::json(nullptr);
  if (j.is_null()) {
    j = {{"cluster", config_ ? config_->cluster.name : ""},
         {"local_node", nullptr},
         {"active", nullptr},
         {"quorate", false},
         {"nodes", nlohmann::json::array()}};
    if (!cluster_) return j;
  }
  j["config_generation"] = generation_;
  if (config_) j["failback"] = failbackJson();
  for (auto& s : subsystems_) {
    nlohmann::json part = s->status();
    if (part.is_object()) j.update(part);
  }
  return j;
}

// The cluster's requests go to it typed, as the admin channel parsed them.
namespace {
Result<nlohmann::json> noCluster() {
  return fail(ErrorCode::kUnavailable, "this tandemd runs without a cluster");
}
}  // namespace

Result<nlohmann::json> Director::standby(const ipc::StandbyArgs& args) {
  return cluster_ ? cluster_->standby(args) : noCluster();
}

Result<nlohmann::json> Director::move(const ipc::MoveArgs& args) {
  return cluster_ ? cluster_->move(args) : noCluster();
}

Result<nlohmann::json> Director::maintenance(bool on) {
  return cluster_ ? cluster_->maintenance(on) : noCluster();
}

Result<nlohmann::json> Director::drain(const ipc::DrainArgs& args) {
  return cluster_ ? cluster_->drain(args) : noCluster();
}

Result<nlohmann::json> Director::drains() { return cluster_ ? cluster_->drains() : noCluster(); }

Result<nlohmann::json> Director::clear() { return cluster_ ? cluster_->clear() : noCluster(); }

namespace {

nlohmann::json diffJson(const config::ReloadDiff& diff) {
  nlohmann::json refused = nlohmann::json::array();
  for (const auto& r : diff.refused) {
    refused.push_back({{"key", r.key},
                       {"running", r.running},
                       {"next", r.next},
                       {"why", r.why},
                       {"message", r.format()}});
  }
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : diff.changes) {
    changes.push_back({{"section", c.section}, {"details", c.details}});
  }
  return {{"refused", std::move(refused)}, {"changes", std::move(changes)}};
}

}  // namespace

Result<nlohmann::json> Director::reload() {
  uint64_t before = generation_;
  reloadConfig();
  nlohmann::json j{{"file", options_.config_path},
                   {"generation", generation_},
                   {"accepted", generation_ != before}};
  if (last_reload_) {
    j["changed"] = last_reload_->changedSections();
    j.update(diffJson(*last_reload_));
  }
  return j;
}

Result<nlohmann::json> Director::configDiff() {
  if (!config_) return fail(ErrorCode::kUnavailable, "tandemd has not loaded a config yet");
  config::LoadResult loaded = loadConfig(nullptr);
  if (!loaded.ok()) {
    return fail(ErrorCode::kInvalidArgument,
                options_.config_path + " does not load, so a reload would be refused:\n" +
                    loaded.diagnostics.formatAll(10) + "`tandem config verify " +
                    options_.config_path + "` lists every problem");
  }
  const config::ReloadDiff diff = config::diffReload(*config_, *loaded.config, options_.node_name);
  nlohmann::json j{
      {"file", options_.config_path}, {"generation", generation_}, {"accepted", diff.accepted()}};
  j.update(diffJson(diff));
  return j;
}

Result<nlohmann::json> Director::configShow() {
  if (!config_) return fail(ErrorCode::kUnavailable, "tandemd has not loaded a config yet");
  auto now = platform_.files().readFile(options_.config_path, config::kMaxConfigBytes);
  return nlohmann::json{{"file", options_.config_path},
                        {"generation", generation_},
                        {"text", config_text_},
                        {"file_changed", !now || *now != config_text_}};
}

Result<nlohmann::json> Director::ipvs() { return command("ipvs", nlohmann::json::object()); }

Result<nlohmann::json> Director::sync() {
  auto answer = command("sync", nlohmann::json::object());
  if (!answer) return answer;
  // What the other directors hold comes from their heartbeats, which the cluster keeps.
  const nlohmann::json st = status();
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : st.value("nodes", nlohmann::json::array())) {
    nodes.push_back({{"name", n.value("name", "")},
                     {"role", n.value("role", "")},
                     {"connections", n.value("connections", uint64_t{0})},
                     {"sync_backup_ms", n.value("sync_backup_ms", int64_t{0})},
                     {"templates", n.value("templates", uint64_t{0})},
                     {"sync_heard_ms", n.value("sync_heard_ms", nlohmann::json(nullptr))}});
  }
  (*answer)["nodes"] = std::move(nodes);
  (*answer)["failback_waiting"] = st.value("failback_waiting", "");
  return answer;
}

void Director::pingWatchdog() {
  platform_.notifier().notify("WATCHDOG=1");
  watchdog_timer_->arm(watchdog_interval_);
}

config::LoadResult Director::loadConfig(config::FailbackSetting* file_failback) {
  config::LoadResult loaded = config::loadConfigFile(options_.config_path, platform_.files());
  if (loaded.config) {
    if (file_failback != nullptr) *file_failback = config::failbackOf(*loaded.config);
    config::applyFailbackOverride(*loaded.config, failback_override_);
  }
  return loaded;
}

nlohmann::json Director::failbackJson() const {
  const config::FailbackSetting in_force = config::failbackOf(*config_);
  auto describe = [](const config::FailbackSetting& s) {
    return nlohmann::json{{"policy", config::failbackText(s)},
                          {"delay_ms", static_cast<int64_t>(s.delay.count())}};
  };
  nlohmann::json j = describe(in_force);
  j["source"] = failback_override_ ? "TANDEM_FAILBACK" : "config file";
  j["config_file"] = describe(failback_file_);
  return j;
}

void Director::logDiagnostics(const config::Diagnostics& diagnostics) {
  for (const config::Diagnostic& d : diagnostics.sorted()) {
    platform_.logger().log(
        d.severity == config::Diagnostic::Severity::kError ? LogLevel::kError : LogLevel::kWarning,
        d.format());
  }
}

void Director::applyLogLevel() {
  // The loader accepts only known level names, so a miss here keeps the current level.
  if (auto level = platform::parseLogLevel(config_->daemon.log_level)) {
    platform_.logger().setLevel(*level);
  }
}

std::string Director::describeRunning() const {
  return "config generation " + std::to_string(generation_) + ": cluster " + config_->cluster.name +
         ", " + plural(config_->nodes.size(), "node");
}

std::string Director::runningContext() const {
  return kv("generation", generation_) + " " + kv("cluster", config_->cluster.name) + " " +
         kv("nodes", config_->nodes.size()) + " " + kv("vips", config_->vips.size()) + " " +
         kv("services", config_->virtual_servers.size());
}

}  // namespace tandem::director
