#include "sync/sync_subsystem.h"

#include <utility>

#include "common/duration.h"
#include "sync/sync_message.h"

namespace tandem::resources::sync {

using ipvs::SyncDaemon;
using ipvs::SyncState;

namespace {

constexpr SyncState kStates[] = {SyncState::kBackup, SyncState::kMaster};

// The ACTIVE's sync master role, in Stage::kSync. A sync daemon the kernel refuses is logged
// and shown in the status, and never fails the chain: a takeover without sync still serves
// every new connection, one refused by the sync daemon would serve none.
class MasterRole final : public Resource {
 public:
  explicit MasterRole(SyncSubsystem& sync) : sync_(sync) {}
  std::string_view name() const override { return "sync-master"; }
  void start(Done done) override { sync_.wantMaster(true, succeed(std::move(done))); }
  void stop(Done done) override { sync_.wantMaster(false, succeed(std::move(done))); }
  void monitor(Done done) override { sync_.verify(succeed(std::move(done))); }
  bool present() const override { return sync_.masterRunning(); }
  nlohmann::json describe() const override {
    return {{"passes", sync_.passes()}, {"restarts", sync_.restarts()}};
  }

 private:
  static Done succeed(Done done) {
    return [done = std::move(done)](Result<void>) { done(Result<void>()); };
  }
  SyncSubsystem& sync_;
};

}  // namespace

SyncDaemon desiredDaemon(const config::Sync& sync, SyncState state) {
  SyncDaemon d;
  d.state = state;
  d.interface = sync.interface;
  d.sync_id = static_cast<uint32_t>(sync.sync_id);
  d.max_len = static_cast<uint16_t>(sync.max_message_length);
  d.group = sync.multicast_group;
  d.port = sync.port;
  d.ttl = static_cast<uint8_t>(sync.ttl);
  return d;
}

bool sameDaemon(const SyncDaemon& running, const SyncDaemon& wanted) {
  return running.state == wanted.state && running.interface == wanted.interface &&
         running.sync_id == wanted.sync_id && running.group == wanted.group &&
         running.port == wanted.port && running.ttl == wanted.ttl;
}

SyncSubsystem::SyncSubsystem(SyncDeps deps, std::string self)
    : deps_(std::move(deps)), self_(std::move(self)) {
  master_ = std::make_shared<MasterRole>(*this);
  timer_ = deps_.dispatcher.createTimer([this] { verify({}); });
}

SyncSubsystem::~SyncSubsystem() { *alive_ = false; }

void SyncSubsystem::log(LogLevel level, const std::string& line) const {
  if (deps_.log) deps_.log(level, line);
}

std::string SyncSubsystem::describe(const SyncDaemon& d) const {
  return "the IPVS sync " + ipvs::syncStateName(d.state) + " daemon on " + d.interface +
         " (sync id " + std::to_string(d.sync_id) + ", " + ipvs::hostPort(d.group, d.port) +
         ", ttl " + std::to_string(d.ttl) + ")";
}

void SyncSubsystem::configure(const config::Config& next, const config::Config* running,
                              const config::ReloadDiff& diff) {
  (void)diff;
  const bool was = configured_ && sync_.enabled;
  if (running != nullptr && was && next.sync.enabled &&
      next.sync.max_message_length != sync_.max_message_length) {
    force_restart_ = true;
  }
  sync_ = next.sync;
  interval_ = next.ipvs.monitor_interval;
  const bool first = !configured_;
  configured_ = true;
  if (!sync_.enabled && was) {
    log(LogLevel::kNotice, "[sync] disabled: stopping the sync daemons tandem runs");
  }
  // At start, start() runs the first pass, once every subsystem is configured.
  if (!first && (sync_.enabled || was)) converge({});
}

Result<void> SyncSubsystem::start() {
  if (sync_.enabled) converge({});
  return {};
}

std::vector<HeldResource> SyncSubsystem::held() {
  if (!sync_.enabled) return {};
  return {{Stage::kSync, master_}};
}

void SyncSubsystem::shutdown() {
  *alive_ = false;
  alive_ = std::make_shared<bool>(true);
  timer_->cancel();
  tap_.reset();
  kernel_.reset();
  running_ = false;
  waiting_.clear();
  current_.clear();
}

void SyncSubsystem::wantMaster(bool on, Done done) {
  want_master_ = on;
  converge(std::move(done));
}

void SyncSubsystem::verify(Done done) { converge(std::move(done)); }

bool SyncSubsystem::wanted(size_t state) const {
  if (!sync_.enabled) return false;
  return state == kBackup || want_master_;
}

void SyncSubsystem::converge(Done done) {
  if (done) waiting_.push_back(std::move(done));
  if (running_) return;
  startPass();
}

void SyncSubsystem::startPass() {
  running_ = true;
  current_ = std::move(waiting_);
  waiting_.clear();
  steps_.clear();
  next_step_ = 0;
  pass_error_.clear();
  if (!manages()) {
    passDone();
    return;
  }
  if (!kernel_) {
    auto opened = deps_.open ? deps_.open()
                             : Result<std::unique_ptr<ipvs::SyncKernel>>(
                                   fail(ErrorCode::kUnavailable, "no IPVS backend"));
    if (!opened) {
      pass_error_ = "cannot drive the IPVS sync daemons: " + opened.error().message;
      passDone();
      return;
    }
    kernel_ = std::move(*opened);
  }
  std::weak_ptr<bool> alive = alive_;
  kernel_->daemons([this, alive](Result<std::vector<SyncDaemon>> listed) {
    if (alive.expired()) return;
    onDaemons(std::move(listed));
  });
}

void SyncSubsystem::onDaemons(Result<std::vector<SyncDaemon>> listed) {
  if (!listed) {
    pass_error_ = "cannot read the IPVS sync daemons: " + listed.error().message;
    passDone();
    return;
  }
  const bool restart_all = std::exchange(force_restart_, false);
  for (size_t i = 0; i < 2; ++i) {
    const SyncState state = kStates[i];
    const SyncDaemon* have = nullptr;
    for (const auto& d : *listed) {
      if (d.state == state) have = &d;
    }
    Seen& seen = seen_[i];
    if (have == nullptr && seen.running) {
      seen.running = false;
      seen.daemon.reset();
    }
    if (have != nullptr) {
      if (!seen.running) seen.since_ms = wallMs();
      seen.running = true;
      seen.daemon = *have;
    }
    const SyncDaemon want = desiredDaemon(sync_, state);
    if (!wanted(i)) {
      // Only what this director is there to manage: with [sync] disabled, a daemon an
      // operator started by hand stays.
      if (have != nullptr && (sync_.enabled || seen.started_by_us)) {
        steps_.push_back(Step{Step::Kind::kStop, *have, false});
      }
      continue;
    }
    if (have != nullptr && sameDaemon(*have, want) && !restart_all) continue;
    if (have != nullptr) steps_.push_back(Step{Step::Kind::kStop, *have, false});
    // Gone although this process started it and never stopped it: someone else did.
    steps_.push_back(Step{Step::Kind::kStart, want, have == nullptr && seen.started_by_us});
  }
  runSteps();
}

void SyncSubsystem::runSteps() {
  if (next_step_ == steps_.size()) {
    passDone();
    return;
  }
  const Step step = steps_[next_step_++];
  const size_t i = step.daemon.state == SyncState::kMaster ? kMaster : kBackup;
  std::weak_ptr<bool> alive = alive_;
  if (step.kind == Step::Kind::kStop) {
    kernel_->stopDaemon(step.daemon.state, [this, alive, step, i](Result<void> r) {
      if (alive.expired()) return;
      // Already gone is what a stop wants.
      if (r || r.error().code == ErrorCode::kNotFound) {
        seen_[i] = Seen{};
        log(LogLevel::kNotice, "stopped " + describe(step.daemon));
      } else {
        pass_error_ = "cannot stop " + describe(step.daemon) + ": " + r.error().message;
      }
      runSteps();
    });
    return;
  }
  kernel_->startDaemon(step.daemon, [this, alive, step, i](Result<void> r) {
    if (alive.expired()) return;
    if (r) {
      Seen& seen = seen_[i];
      seen.running = true;
      seen.daemon = step.daemon;
      seen.since_ms = wallMs();
      seen.started_by_us = true;
      if (step.restart) {
        ++restarts_;
        log(LogLevel::kWarning, describe(step.daemon) +
                                    " was stopped behind tandem's back (ipvsadm --stop-daemon?); "
                                    "restarted");
      } else {
        log(LogLevel::kNotice, "started " + describe(step.daemon));
      }
    } else {
      pass_error_ = "cannot start " + describe(step.daemon) + ": " + r.error().message;
    }
    runSteps();
  });
}

void SyncSubsystem::passDone() {
  ++passes_;
  running_ = false;
  if (pass_error_ != last_error_) {
    if (!pass_error_.empty()) {
      log(LogLevel::kError, pass_error_ + "; trying again every " + formatDuration(interval_));
    } else if (!last_error_.empty()) {
      log(LogLevel::kNotice, "the IPVS sync daemons run as configured again");
    }
    last_error_ = pass_error_;
  }
  if (sync_.enabled) {
    timer_->arm(interval_);
  } else {
    timer_->cancel();
  }
  updateTap();
  report();
  Result<void> result;
  if (!pass_error_.empty()) result = fail(ErrorCode::kUnavailable, pass_error_);
  auto done = std::move(current_);
  current_.clear();
  std::weak_ptr<bool> alive = alive_;
  for (auto& d : done) {
    if (alive.expired()) return;
    d(result);
  }
  if (alive.expired()) return;
  if (!running_ && !waiting_.empty()) startPass();
}

void SyncSubsystem::updateTap() {
  const Seen& backup = seen_[kBackup];
  if (!backup.running || !backup.daemon || !deps_.open_tap) {
    tap_.reset();
    tap_for_.reset();
    tap_error_.clear();
    return;
  }
  if (tap_ && tap_for_ && sameDaemon(*tap_for_, *backup.daemon)) return;
  tap_.reset();
  tap_for_ = *backup.daemon;
  auto opened =
      deps_.open_tap(*backup.daemon, [this](std::span<const uint8_t> datagram,
                                            const IpAddress& from) { onDatagram(datagram, from); });
  if (!opened) {
    if (opened.error().message != tap_error_) {
      log(LogLevel::kWarning, opened.error().message +
                                  "; the status cannot say what the backup hears (the backup "
                                  "itself is not affected); trying again at the next pass");
    }
    tap_error_ = opened.error().message;
    return;
  }
  tap_error_.clear();
  tap_ = std::move(*opened);
}

void SyncSubsystem::onDatagram(std::span<const uint8_t> datagram, const IpAddress& from) {
  if (!tap_for_) return;
  auto m = parseSyncMessage(datagram);
  if (!m) {
    ++heard_.malformed;
    heard_.last_malformed = "from " + from.toString() + ": " + m.error().message;
    const loop::MonoTime now = deps_.dispatcher.now();
    // At most one line a minute: a sender of garbage on the group must not flood the journal.
    if (!heard_.malformed_logged || now - *heard_.malformed_logged >= std::chrono::minutes(1)) {
      heard_.malformed_logged = now;
      log(LogLevel::kWarning, "a datagram on the sync group " +
                                  ipvs::hostPort(syncGroupOf(*tap_for_), syncPortOf(*tap_for_)) +
                                  " is no sync message (" + heard_.last_malformed +
                                  "); the backup daemon drops it");
    }
    return;
  }
  if (!backupTakes(tap_for_->sync_id, *m)) {
    ++heard_.other_id;
    heard_.last_other_id = m->sync_id;
    if (!heard_.other_ids_logged[m->sync_id]) {
      heard_.other_ids_logged[m->sync_id] = true;
      log(LogLevel::kNotice,
          "sync messages for sync id " + std::to_string(m->sync_id) + " from " + from.toString() +
              " reach the backup daemon on " + tap_for_->interface + ", which takes only sync id " +
              std::to_string(tap_for_->sync_id) +
              " and drops them: another cluster on the same group, or a [sync] sync_id that "
              "differs between the directors");
    }
    return;
  }
  ++heard_.messages;
  heard_.connections += m->connections;
  heard_.last_ms = wallMs();
  heard_.from = from;
  if (heard_.last_ms - reported_heard_ms_ >= 1000) report();
}

SyncReport SyncSubsystem::syncReport() const {
  SyncReport r;
  r.connections = deps_.connections ? deps_.connections() : 0;
  r.templates = deps_.templates ? deps_.templates() : 0;
  r.backup_running = seen_[kBackup].running;
  if (heard_.messages > 0) r.heard_ago_ms = std::max<int64_t>(0, wallMs() - heard_.last_ms);
  return r;
}

void SyncSubsystem::report() {
  if (!deps_.report) return;
  reported_heard_ms_ = heard_.last_ms;
  deps_.report(syncReport());
}

void SyncSubsystem::registerCommands(CommandTable& table) {
  table.add("sync",
            [this](const nlohmann::json&) -> Result<nlohmann::json> { return status()["sync"]; });
}

void SyncSubsystem::writeMetrics(metrics::Exposition& out) const {
  using metrics::labelSet;
  if (!sync_.enabled) return;
  out.family("tandem_sync_daemon_running", metrics::Type::kGauge,
             "1 while the kernel's sync daemon runs");
  for (size_t i = 0; i < 2; ++i) {
    out.sample(labelSet({{"daemon", ipvs::syncStateName(kStates[i])}}),
               seen_[i].running ? 1.0 : 0.0);
  }
  out.gauge("tandem_sync_connections", "Connections in this director's IPVS connection table",
            static_cast<double>(deps_.connections ? deps_.connections() : 0));
  out.gauge("tandem_sync_templates", "Persistence templates in it",
            static_cast<double>(deps_.templates ? deps_.templates() : 0));
  out.counter("tandem_sync_messages", "Sync messages the backup heard", heard_.messages);
  if (heard_.last_ms != 0) {
    const int64_t age = wallMs() - heard_.last_ms;
    out.gauge("tandem_sync_last_message_age_seconds",
              "Time since the backup last heard a sync message",
              static_cast<double>(age > 0 ? age : 0) / 1000.0, "seconds");
  }
}

nlohmann::json SyncSubsystem::status() const {
  nlohmann::json daemons = nlohmann::json::array();
  for (size_t i = 0; i < 2; ++i) {
    const Seen& seen = seen_[i];
    nlohmann::json d{{"state", ipvs::syncStateName(kStates[i])},
                     {"wanted", wanted(i)},
                     {"running", seen.running}};
    if (seen.daemon) {
      d["interface"] = seen.daemon->interface;
      d["sync_id"] = seen.daemon->sync_id;
      d["group"] = seen.daemon->group.toString();
      d["port"] = seen.daemon->port;
      d["ttl"] = seen.daemon->ttl;
      d["max_message_length"] = seen.daemon->max_len;
      d["since_ms"] = seen.since_ms;
    }
    daemons.push_back(std::move(d));
  }
  nlohmann::json j{{"enabled", sync_.enabled},
                   {"daemons", std::move(daemons)},
                   {"restarts", restarts_},
                   {"connections", deps_.connections ? deps_.connections() : 0},
                   {"templates", deps_.templates ? deps_.templates() : 0},
                   {"error", last_error_},
                   {"now_ms", wallMs()}};
  nlohmann::json heard{{"listening", tap_ != nullptr},
                       {"messages", heard_.messages},
                       {"connections", heard_.connections},
                       {"last_ms", nullptr},
                       {"from", nullptr},
                       {"other_sync_id", heard_.other_id},
                       {"last_other_sync_id", nullptr},
                       {"malformed", heard_.malformed},
                       {"last_malformed", heard_.last_malformed},
                       {"error", tap_error_}};
  if (heard_.last_ms != 0) heard["last_ms"] = heard_.last_ms;
  if (heard_.from) heard["from"] = heard_.from->toString();
  if (heard_.last_other_id) heard["last_other_sync_id"] = *heard_.last_other_id;
  j["heard"] = std::move(heard);
  if (sync_.enabled) {
    j["interface"] = sync_.interface;
    j["sync_id"] = sync_.sync_id;
    j["group"] = sync_.multicast_group.toString();
    j["port"] = sync_.port;
  }
  return {{"sync", std::move(j)}};
}

}  // namespace tandem::resources::sync
