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

struct HealthSubsystem::Monitor {
  Monitor(const config::Check& c, ProbeTarget t)
      : check(c), target(std::move(t)), state(c.rise, c.fall, c.initial) {}
  config::Check check;
  ProbeTarget target;
  RiseFall state;
  std::unique_ptr<Checker> checker;
  std::unique_ptr<loop::Timer> timer;
  bool probing = false;
  std::optional<ProbeResult> last;
  uint64_t last_at_ms = 0;
  uint64_t since_ms = 0;  // wall clock of the last change of state (or of the start)
  uint64_t probes = 0;
};

HealthSubsystem::HealthSubsystem(HealthDeps deps) : deps_(std::move(deps)) {}

HealthSubsystem::~HealthSubsystem() { shutdown(); }

void HealthSubsystem::log(LogLevel level, const std::string& line) const {
  if (deps_.log) deps_.log(level, line);
}

void HealthSubsystem::changed(const std::string& virtual_server, const Endpoint& real_server,
                              bool up) {
  if (deps_.on_change) deps_.on_change(virtual_server, real_server, up);
}

void HealthSubsystem::configure(const config::Config& next, const config::Config* running,
                                const config::ReloadDiff& diff) {
  (void)running;
  (void)diff;
  std::map<Key, std::unique_ptr<Monitor>> kept;
  std::vector<std::pair<Key, bool>> report;  // after the maps are settled
  std::map<std::string, size_t> unbuilt;     // check types without a checker: servers each
  const uint64_t now_ms = deps_.wall_clock_ms ? deps_.wall_clock_ms() : 0;
  for (const auto& vs : next.virtual_servers) {
    for (const auto& rs : vs.real_servers) {
      if (rs.check.type == config::CheckType::kNone) continue;
      Key key{vs.name, rs.address};
      if (kept.count(key) != 0) continue;  // the loader refuses duplicates; keep the first
      auto it = monitors_.find(key);
      ProbeTarget target{probed(rs), rs.check, vs.name};
      if (it != monitors_.end() && it->second->check == rs.check &&
          it->second->target.address == target.address) {
        kept.emplace(key, std::move(it->second));
        monitors_.erase(it);
        continue;
      }
      const bool had = it != monitors_.end();
      const bool was_up = had ? it->second->state.up() : true;
      if (had) monitors_.erase(it);
      auto m = std::make_unique<Monitor>(rs.check, std::move(target));
      m->checker = deps_.make_checker ? deps_.make_checker(rs.check.type) : nullptr;
      m->since_ms = now_ms;
      if (!m->checker) {
        ++unbuilt[config::checkTypeName(rs.check.type)];
        if (!was_up) report.emplace_back(key, true);
        continue;
      }
      Monitor& ref = *m;
      m->timer = deps_.dispatcher.createTimer([this, &ref] { runProbe(ref); });
      if (m->state.up() != was_up) report.emplace_back(key, m->state.up());
      kept.emplace(key, std::move(m));
      schedule(ref, startOffset(rs.check.interval, deps_.random16 ? deps_.random16() : 0));
    }
  }
  for (const auto& [type, n] : unbuilt) {
    log(LogLevel::kWarning, type + " checks are not built yet: " + std::to_string(n) +
                                " real server(s) with one are not checked and count as up");
  }
  // What is left lost its check (or its server): it counts as up again.
  for (auto& [key, m] : monitors_) {
    if (!m->state.up()) report.emplace_back(key, true);
  }
  for (auto& [key, m] : monitors_) {
    if (m->checker) m->checker->cancel();
  }
  monitors_ = std::move(kept);
  for (const auto& [key, up] : report) changed(key.first, key.second, up);
  reportShare();
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

void HealthSubsystem::schedule(Monitor& m, Millis after) { m.timer->arm(after); }

void HealthSubsystem::runProbe(Monitor& m) {
  m.probing = true;
  ++m.probes;
  m.checker->probe(m.target, [this, &m](ProbeResult r) { onResult(m, std::move(r)); });
}

void HealthSubsystem::onResult(Monitor& m, ProbeResult r) {
  m.probing = false;
  m.last_at_ms = deps_.wall_clock_ms ? deps_.wall_clock_ms() : 0;
  const bool flipped = m.state.record(r.ok);
  m.last = r;
  if (flipped) {
    m.since_ms = m.last_at_ms;
    const std::string check = config::checkTypeName(m.check.type);
    const std::string rise_fall = m.state.up()
                                      ? std::to_string(m.check.rise) + " success(es) in a row"
                                      : std::to_string(m.check.fall) + " failure(s) in a row";
    log(m.state.up() ? LogLevel::kNotice : LogLevel::kWarning,
        std::string("real server ") + std::string(healthName(m.state.up())) +
            " vs=" + m.target.virtual_server + " rs=" + m.target.address.toString() +
            " check=" + check + " reason=\"" + r.reason + "\" after=\"" + rise_fall + "\"");
    history_.push_back(HealthEvent{m.last_at_ms, m.target.virtual_server, m.target.address,
                                   m.state.up(), check, r.reason});
    while (history_.size() > kHistory) history_.pop_front();
    // The monitor's key is (virtual server, configured address); the probed port may differ.
    for (const auto& [key, mon] : monitors_) {
      if (mon.get() == &m) {
        changed(key.first, key.second, m.state.up());
        break;
      }
    }
    reportShare();
  }
  // The next probe starts one interval after this one ended: the windows in the reference.
  schedule(m, m.check.interval);
}

size_t HealthSubsystem::up() const {
  return static_cast<size_t>(std::count_if(monitors_.begin(), monitors_.end(),
                                           [](const auto& kv) { return kv.second->state.up(); }));
}

std::optional<bool> HealthSubsystem::isUp(const std::string& virtual_server,
                                          const Endpoint& real_server) const {
  auto it = monitors_.find(Key{virtual_server, real_server});
  if (it == monitors_.end()) return std::nullopt;
  return it->second->state.up();
}

nlohmann::json HealthSubsystem::status() const {
  if (monitors_.empty()) return nullptr;
  nlohmann::json servers = nlohmann::json::array();
  for (const auto& [key, m] : monitors_) {
    nlohmann::json s{{"virtual_server", key.first},
                     {"real_server", key.second.toString()},
                     {"check", config::checkTypeName(m->check.type)},
                     {"health", healthName(m->state.up())},
                     {"since_ms", m->since_ms},
                     {"probes", m->probes}};
    if (m->last) {
      s["last"] = {{"ok", m->last->ok},
                   {"reason", m->last->reason},
                   {"took_ms", m->last->took.count()},
                   {"at_ms", m->last_at_ms}};
    } else {
      s["last"] = nullptr;
    }
    servers.push_back(std::move(s));
  }
  return nlohmann::json{
      {"health",
       {{"checked", monitors_.size()}, {"up", up()}, {"real_servers", std::move(servers)}}}};
}

void HealthSubsystem::shutdown() {
  for (auto& [key, m] : monitors_) {
    if (m->checker) m->checker->cancel();
    if (m->timer) m->timer->cancel();
  }
  monitors_.clear();
}

}  // namespace tandem::resources::health
