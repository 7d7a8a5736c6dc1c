#include "health/health_subsystem.h"

#include <algorithm>

#include "election/election.h"

namespace tandem::resources::health {

namespace {

// The endpoint a check probes: its own port, else the real server's (resolved by the loader).
Endpoint probed(const config::RealServer& rs) {
  Endpoint e = rs.address;
  if (rs.check.port != 0) e.port = rs.check.port;
  return e;
}

}  // namespace

// What IPVS was told of a real server.
struct Reported {
  bool up = true;
  std::optional<int> weight;  // unset: the configured weight
  bool operator==(const Reported&) const = default;
};

struct HealthSubsystem::Monitor {
  Monitor(Key k, ProbeTarget t, int configured_weight, Millis ramp_over)
      : key(std::move(k)),
        target(std::move(t)),
        state(target.check.rise, target.check.fall, target.check.initial),
        weight(configured_weight),
        slow_start(ramp_over) {}
  const config::Check& check() const { return target.check; }
  Key key;  // (virtual server, the real server as configured; the probed port may differ)
  ProbeTarget target;
  RiseFall state;
  int weight;                // configured
  Millis slow_start;         // the service's
  std::optional<int> asked;  // the weight the last healthy result asked for (exit_weight)
  bool ramping = false;
  loop::MonoTime ramp_start{};
  std::optional<Reported> reported;  // what IPVS was told last; unset: nothing yet (up)
  std::unique_ptr<Checker> checker;
  std::unique_ptr<loop::Timer> timer;
  std::unique_ptr<loop::Timer> ramp;
  std::optional<ProbeResult> last;
  uint64_t last_at_ms = 0;
  uint64_t since_ms = 0;  // wall clock of the last change of state (or of the start)
  uint64_t probes = 0;
};

HealthSubsystem::HealthSubsystem(HealthDeps deps)
    : deps_(std::move(deps)), commands_(deps_.children, deps_.log, {1, "virtual_server.notify"}) {}

HealthSubsystem::~HealthSubsystem() { shutdown(); }

void HealthSubsystem::log(LogLevel level, const std::string& line) const {
  if (deps_.log) deps_.log(level, line);
}

void HealthSubsystem::configure(const config::Config& next, const config::Config* running,
                                const config::ReloadDiff& diff) {
  (void)running;
  (void)diff;
  metric_labels_stale_ = true;
  std::map<Key, std::unique_ptr<Monitor>> kept;
  std::vector<Monitor*> touched;          // kept or new: their state is handed on
  std::vector<Key> freed;                 // lost their check: up again
  std::map<std::string, size_t> unbuilt;  // check types without a checker: servers each
  std::map<std::string, Service> services;
  const uint64_t now_ms = deps_.wall_clock_ms ? deps_.wall_clock_ms() : 0;
  for (const auto& vs : next.virtual_servers) {
    Service& svc = services[vs.name];
    svc.notify = vs.notify;
    svc.notify_timeout = vs.notify_timeout;
    for (const auto& rs : vs.real_servers) {
      Key key{vs.name, rs.address};
      if (kept.count(key) != 0) continue;  // the loader refuses duplicates; keep the first
      auto it = monitors_.find(key);
      if (rs.check.type == config::CheckType::kNone) {
        ++svc.unchecked;  // a monitor it had is left over, and freed below
        continue;
      }
      ProbeTarget target{probed(rs), rs.check, vs.name};
      if (it != monitors_.end() && it->second->check() == rs.check &&
          it->second->target.address == target.address) {
        Monitor& m = *it->second;
        m.weight = rs.weight;  // a new weight or slow start needs no new check
        m.slow_start = vs.slow_start;
        if (m.state.up()) ++svc.checked_up;
        touched.push_back(&m);
        kept.emplace(key, std::move(it->second));
        monitors_.erase(it);
        continue;
      }
      std::optional<Reported> reported;
      if (it != monitors_.end()) {
        reported = it->second->reported;
        monitors_.erase(it);
      }
      auto m = std::make_unique<Monitor>(key, std::move(target), rs.weight, vs.slow_start);
      m->reported = reported;
      m->checker = deps_.make_checker ? deps_.make_checker(rs.check.type) : nullptr;
      m->since_ms = now_ms;
      if (!m->checker) {
        ++unbuilt[config::checkTypeName(rs.check.type)];
        ++svc.unchecked;
        if (reported) freed.push_back(key);
        continue;
      }
      Monitor& ref = *m;
      touched.push_back(&ref);
      if (m->state.up()) ++svc.checked_up;
      m->timer = deps_.dispatcher.createTimer([this, &ref] { runProbe(ref); });
      m->ramp = deps_.dispatcher.createTimer([this, &ref] { tickRamp(ref); });
      m->timer->arm(startOffset(rs.check.interval, deps_.random16 ? deps_.random16() : 0));
      kept.emplace(key, std::move(m));
    }
  }
  for (const auto& [type, n] : unbuilt) {
    log(LogLevel::kWarning, type + " checks are not built yet: " + std::to_string(n) +
                                " real server(s) with one are not checked and count as up");
  }
  // What is left lost its check or its server: it counts as up again.
  for (auto& [key, m] : monitors_) {
    if (m->checker) m->checker->cancel();
    if (m->reported) freed.push_back(key);
  }
  monitors_ = std::move(kept);
  services_ = std::move(services);
  for (const Key& key : freed) {
    if (deps_.on_change) deps_.on_change(key.first, key.second, true, std::nullopt);
  }
  for (Monitor* m : touched) report(*m);
  reportShare();
}

std::optional<int> HealthSubsystem::weightNow(const Monitor& m) const {
  const int target = m.asked.value_or(m.weight);
  const int w =
      m.ramping
          ? slowStartWeight(
                target, std::chrono::duration_cast<Millis>(deps_.dispatcher.now() - m.ramp_start),
                m.slow_start)
          : target;
  if (w == m.weight) return std::nullopt;
  return w;
}

void HealthSubsystem::report(Monitor& m) {
  const bool up = m.state.up();
  const Reported now{up, up ? weightNow(m) : std::nullopt};
  // Nothing reported yet means IPVS has the configured weight: an up server needs no report.
  if (m.reported ? *m.reported == now : now == Reported{}) return;
  m.reported = now;
  if (deps_.on_change) deps_.on_change(m.key.first, m.key.second, now.up, now.weight);
}

void HealthSubsystem::notify(const std::string& event, const std::string& virtual_server,
                             const Endpoint* rs, const std::string& reason) {
  auto it = services_.find(virtual_server);
  if (it == services_.end() || !it->second.notify) return;
  EventCommand cmd;
  cmd.command = *it->second.notify;
  cmd.timeout = it->second.notify_timeout;
  cmd.env = {"TANDEM_EVENT=" + event,
             "TANDEM_VIRTUAL_SERVER=" + virtual_server,
             "TANDEM_RS_ADDRESS=" + (rs ? rs->address.toString() : std::string()),
             "TANDEM_RS_PORT=" + (rs ? std::to_string(rs->port) : std::string()),
             "TANDEM_REASON=" + reason,
             "TANDEM_NODE=" + deps_.node};
  cmd.what = "event=" + event + " vs=" + virtual_server + (rs ? " rs=" + rs->toString() : "");
  commands_.run(rs ? virtual_server + " " + rs->toString() : virtual_server, std::move(cmd));
}

void HealthSubsystem::reportShare() {
  int share = 1000;
  if (!monitors_.empty()) {
    share = static_cast<int>(up() * 1000 / monitors_.size());
    // Some up rounds to at least 2: only "none up" is the floor the election knows.
    share = up() == 0 ? election::kHealthNoRealServer
                      : std::max(share, election::kHealthNoRealServer + 1);
  }
  if (share == share_) return;
  share_ = share;
  log(LogLevel::kInfo, "real servers up " + std::to_string(up()) + " of " +
                           std::to_string(monitors_.size()) + " health=" + std::to_string(share));
  if (deps_.on_share) deps_.on_share(share);
}

void HealthSubsystem::runProbe(Monitor& m) {
  ++m.probes;
  m.checker->probe(m.target, [this, &m](ProbeResult r) { onResult(m, std::move(r)); });
}

void HealthSubsystem::onResult(Monitor& m, ProbeResult r) {
  m.last_at_ms = deps_.wall_clock_ms ? deps_.wall_clock_ms() : 0;
  TypeStats& stats = by_type_[static_cast<size_t>(m.check().type)];
  ++stats.run;
  stats.failed += r.ok ? 0 : 1;
  stats.took.observe(static_cast<double>(r.took.count()) / 1000.0);
  const bool flipped = m.state.record(r.ok);
  const std::string check = config::checkTypeName(m.check().type);
  const std::string& vs = m.key.first;
  if (r.ok && r.weight != m.asked) {
    m.asked = r.weight;
    if (!flipped && m.state.up()) {
      log(LogLevel::kNotice, "real server weight vs=" + vs + " rs=" + m.target.address.toString() +
                                 " check=" + check +
                                 " weight=" + std::to_string(m.asked.value_or(m.weight)) +
                                 " reason=\"" + r.reason + "\"");
    }
  }
  if (flipped) {
    m.since_ms = m.last_at_ms;
    const bool up = m.state.up();
    const std::string rise_fall = up ? std::to_string(m.check().rise) + " success(es) in a row"
                                     : std::to_string(m.check().fall) + " failure(s) in a row";
    log(up ? LogLevel::kNotice : LogLevel::kWarning,
        std::string("real server ") + std::string(healthName(up)) + " vs=" + vs +
            " rs=" + m.target.address.toString() + " check=" + check + " reason=\"" + r.reason +
            "\" after=\"" + rise_fall + "\"");
    history_.push_back(HealthEvent{m.last_at_ms, vs, m.target.address, up, check, r.reason});
    if (deps_.on_event) deps_.on_event(history_.back());
    while (history_.size() > kHistory) history_.pop_front();
    m.ramping = up && m.slow_start > Millis(0);
    if (m.ramping) {
      m.ramp_start = deps_.dispatcher.now();
      m.ramp->arm(slowStartStep(m.slow_start));
    } else {
      m.ramp->cancel();
    }
    Service& svc = services_[vs];
    const bool service_was_up = svc.up();
    svc.checked_up = up ? svc.checked_up + 1 : svc.checked_up - 1;
    report(m);
    reportShare();
    notify(up ? "rs-up" : "rs-down", vs, &m.key.second, r.reason);
    if (svc.up() != service_was_up) {
      log(svc.up() ? LogLevel::kNotice : LogLevel::kWarning,
          std::string("virtual server ") + (svc.up() ? "up" : "down") + " vs=" + vs +
              (svc.up() ? " rs=" + m.target.address.toString() : " reason=\"no real server up\""));
      notify(svc.up() ? "vs-up" : "vs-down", vs, nullptr, r.reason);
    }
  } else {
    report(m);  // a new weight asked for
  }
  m.last = std::move(r);
  // The next probe starts one interval after this one ended: the windows in the reference.
  m.timer->arm(m.check().interval);
}

void HealthSubsystem::tickRamp(Monitor& m) {
  if (deps_.dispatcher.now() - m.ramp_start >= m.slow_start) m.ramping = false;
  report(m);
  if (m.ramping) m.ramp->arm(slowStartStep(m.slow_start));
}

size_t HealthSubsystem::up() const {
  // Counted as they change, per service: a count over 10,000 monitors per change made a start
  // with every server "down" quadratic.
  size_t n = 0;
  for (const auto& [name, svc] : services_) n += svc.checked_up;
  return n;
}

std::optional<bool> HealthSubsystem::isUp(const std::string& virtual_server,
                                          const Endpoint& real_server) const {
  auto it = monitors_.find(Key{virtual_server, real_server});
  if (it == monitors_.end()) return std::nullopt;
  return it->second->state.up();
}

nlohmann::json HealthSubsystem::status() const {
  if (monitors_.empty()) return nullptr;
  // The admin channel carries at most 1 MiB; 10,000 servers listed take about 2. The down ones
  // come first, since they are what an operator looks for; the rest as room allows.
  std::vector<const Monitor*> order;
  order.reserve(monitors_.size());
  for (const auto& [key, m] : monitors_) {
    if (!m->state.up()) order.push_back(m.get());
  }
  for (const auto& [key, m] : monitors_) {
    if (m->state.up()) order.push_back(m.get());
  }
  const size_t listed = std::min(order.size(), kStatusServers);
  nlohmann::json servers = nlohmann::json::array();
  for (size_t i = 0; i < listed; ++i) {
    const Monitor& m = *order[i];
    nlohmann::json s{{"virtual_server", m.key.first},
                     {"real_server", m.key.second.toString()},
                     {"check", config::checkTypeName(m.check().type)},
                     {"health", healthName(m.state.up())},
                     {"weight", m.state.up() ? weightNow(m).value_or(m.weight) : 0},
                     {"since_ms", m.since_ms},
                     {"probes", m.probes}};
    if (m.last) {
      s["last"] = {{"ok", m.last->ok},
                   {"reason", m.last->reason},
                   {"took_ms", m.last->took.count()},
                   {"at_ms", m.last_at_ms}};
    } else {
      s["last"] = nullptr;
    }
    servers.push_back(std::move(s));
  }
  return nlohmann::json{{"health",
                         {{"checked", monitors_.size()},
                          {"up", up()},
                          {"listed", listed},
                          {"real_servers", std::move(servers)}}}};
}

void HealthSubsystem::writeMetrics(metrics::Exposition& out) const {
  using metrics::labelSet;
  using metrics::Type;
  if (monitors_.empty()) return;
  if (metric_labels_stale_) {
    metric_labels_.clear();
    metric_index_.clear();
    metric_index_.reserve(monitors_.size());
    for (const auto& [key, m] : monitors_) {
      // As the IPVS series write a real server: with its port, 0 included.
      const std::string l =
          labelSet({{"vs", key.first}, {"rs", hostPort(key.second.address, key.second.port)}});
      metric_index_.push_back(
          {m.get(),
           {static_cast<uint32_t>(metric_labels_.size()), static_cast<uint32_t>(l.size())}});
      metric_labels_ += l;
    }
    metric_labels_stale_ = false;
  }
  out.family("tandem_real_server_up", Type::kGauge,
             "1 when the real server's checks say up, 0 when down");
  const std::string_view text = metric_labels_;
  for (const auto& [m, at] : metric_index_) {
    out.sample(text.substr(at.first, at.second), m->state.up() ? uint64_t{1} : uint64_t{0});
  }
  out.family("tandem_virtual_server_healthy_real_servers", Type::kGauge,
             "Real servers up (unchecked ones count as up), the fallback not counted");
  for (const auto& [vs, svc] : services_) {
    out.sample(labelSet({{"vs", vs}}), static_cast<uint64_t>(svc.unchecked + svc.checked_up));
  }
  auto perType = [&](auto write) {
    for (size_t i = 0; i < by_type_.size(); ++i) {
      const auto type = static_cast<config::CheckType>(i);
      if (type == config::CheckType::kNone) continue;
      write(labelSet({{"type", config::checkTypeName(type)}}), by_type_[i]);
    }
  };
  out.family("tandem_checks", Type::kCounter, "Checks run");
  perType([&](const std::string& l, const TypeStats& t) { out.sample(l, t.run); });
  out.family("tandem_check_failures", Type::kCounter, "Checks that failed");
  perType([&](const std::string& l, const TypeStats& t) { out.sample(l, t.failed); });
  out.family("tandem_check_duration_seconds", Type::kHistogram, "How long checks took", "seconds");
  perType([&](const std::string& l, const TypeStats& t) { out.histogram(l, t.took); });
}

void HealthSubsystem::shutdown() {
  for (auto& [key, m] : monitors_) {
    if (m->checker) m->checker->cancel();
    if (m->timer) m->timer->cancel();
    if (m->ramp) m->ramp->cancel();
  }
  monitors_.clear();
  metric_index_.clear();
  metric_labels_stale_ = true;
  commands_.clear();
}

}  // namespace tandem::resources::health
