#include "ipvs/ipvs_subsystem.h"

#include <chrono>
#include <cstring>
#include <map>
#include <utility>

#include "ipvs/ipvs_desired.h"
#include "ipvs/ipvs_json.h"
#include "sysctl/sysctl_apply.h"

namespace tandem::resources::ipvs {

namespace {

// IPVS's place in the takeover order. The table is already there on every director, so a
// takeover never waits for the kernel here: it only makes sure a verify pass follows soon when
// the last one did not succeed.
class TakeoverStep final : public Resource {
 public:
  explicit TakeoverStep(IpvsSubsystem& ipvs) : ipvs_(ipvs) {}
  std::string_view name() const override { return "ipvs-table"; }
  void start(Done done) override {
    ipvs_.onTakeover();
    done(Result<void>());
  }
  void stop(Done done) override { done(Result<void>()); }
  void monitor(Done done) override { done(Result<void>()); }
  bool present() const override { return false; }
  nlohmann::json describe() const override {
    const IpvsReconcileLoop* loop = ipvs_.reconcileLoop();
    return {{"kept", ipvs_.running()},
            {"in_sync", loop != nullptr && loop->lastPassOk()},
            {"passes", loop != nullptr ? loop->passes() : 0}};
  }

 private:
  IpvsSubsystem& ipvs_;
};

}  // namespace

IpvsSubsystem::IpvsSubsystem(IpvsDeps deps, std::string self)
    : deps_(std::move(deps)), self_(std::move(self)) {
  takeover_step_ = std::make_shared<TakeoverStep>(*this);
}

IpvsSubsystem::~IpvsSubsystem() { shutdown(); }

void IpvsSubsystem::shutdown() {
  if (loop_) loop_->stop();
  if (retry_) retry_->cancel();
}

void IpvsSubsystem::log(LogLevel level, const std::string& line) const {
  if (deps_.log) deps_.log(level, line);
}

void IpvsSubsystem::checkKernelSettings(const config::Config& cfg) {
  if (deps_.sysctl_reader == nullptr) return;
  const config::Node* self = cfg.findNode(self_);
  std::vector<std::string> interfaces = self ? self->interfaces : std::vector<std::string>{};
  sysctl::SysctlWriter* writer = cfg.ipvs.set_sysctls ? deps_.sysctl_writer : nullptr;
  for (const auto& line : sysctl::checkSysctls(cfg, interfaces, *deps_.sysctl_reader, writer)) {
    log(line.level, line.text);
  }
}

void IpvsSubsystem::configure(const config::Config& next, const config::Config* running,
                              const config::ReloadDiff& diff) {
  const bool relevant = running == nullptr || diff.changed("virtual_servers") ||
                        diff.changed("ipvs") || diff.changed("nodes") || diff.changed("sync");
  config_ = next;
  ++config_generation_;
  if (relevant) checkKernelSettings(next);
  if (loop_) {
    // Also when the reload dropped every service: the loop removes the ones tandem added.
    if (relevant) loop_->configure(*config_);
    return;
  }
  if (config_->virtual_servers.empty()) {
    if (retry_) retry_->cancel();
    return;
  }
  tryOpen();
}

std::vector<HeldResource> IpvsSubsystem::held() { return {{Stage::kIpvs, takeover_step_}}; }

void IpvsSubsystem::onTakeover() {
  if (loop_ && !loop_->lastPassOk()) {
    log(LogLevel::kWarning,
        "taking over with an IPVS table whose last pass did not complete; verifying it now");
    loop_->reconcileNow();
  }
}

namespace {

// A fingerprint of a table's services and real servers (their keys, in order; not weights or
// counters): a walk of two vectors, where rendering their label sets again costs a string each.
uint64_t tableKeys(const Table& t) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
  auto address = [&mix](const IpAddress& a) {
    uint64_t w[2];
    std::memcpy(w, a.bytes.data(), sizeof w);
    mix(w[0]);
    mix(w[1]);
  };
  for (const ServiceState& s : t.services) {
    const ServiceKey& k = s.service.key;
    address(k.address);
    mix((uint64_t{k.protocol} << 48) | (uint64_t{k.port} << 32) | k.fwmark |
        (static_cast<uint64_t>(k.family) << 56));
    for (const DestinationState& d : s.destinations) {
      address(d.dest.key.address);
      mix(d.dest.key.port);
    }
    mix(~uint64_t{0});
  }
  return h;
}

}  // namespace

void IpvsSubsystem::writeMetrics(metrics::Exposition& out) const {
  using metrics::Type;
  out.gauge("tandem_ipvs_in_sync",
            "1 when the last monitor pass found the table as the config wants it",
            loop_ && loop_->lastPassOk() ? 1.0 : 0.0);
  const Table* t = loop_ ? loop_->lastTable() : nullptr;
  if (t == nullptr) return;
  size_t dests = 0;
  for (const ServiceState& s : t->services) dests += s.destinations.size();
  out.gauge("tandem_ipvs_services", "Virtual services in the kernel's table",
            static_cast<double>(t->services.size()));
  out.gauge("tandem_ipvs_real_servers", "Real servers in the kernel's table",
            static_cast<double>(dests));
  if (auto at = loop_->lastDumpAt()) {
    out.gauge("tandem_ipvs_dump_age_seconds", "Age of the dump the IPVS series come from",
              std::chrono::duration<double>(deps_.dispatcher.now() - *at).count(), "seconds");
  }
  const uint64_t keys = tableKeys(*t);
  if (metric_labels_.keys != keys || metric_labels_.config_generation != config_generation_ ||
      metric_labels_.rs.size() != dests || metric_labels_.vs.size() != t->services.size()) {
    // A configured service is labelled with its name, as the health series are; another (ipvs
    // manage "all") with the kernel's key.
    std::map<ServiceKey, std::string_view> names;
    if (config_) {
      for (const config::VirtualServer& vs : config_->virtual_servers) {
        names.emplace(desiredService(vs).key, vs.name);
      }
    }
    MetricLabels fresh{keys, config_generation_, {}, {}, {}};
    fresh.vs.reserve(t->services.size());
    fresh.rs.reserve(dests);
    auto add = [&fresh](const std::string& labels) {
      std::pair<uint32_t, uint32_t> at{static_cast<uint32_t>(fresh.text.size()),
                                       static_cast<uint32_t>(labels.size())};
      fresh.text += labels;
      return at;
    };
    for (const ServiceState& s : t->services) {
      auto named = names.find(s.service.key);
      const std::string vs =
          named != names.end() ? std::string(named->second) : serviceName(s.service.key);
      fresh.vs.push_back(add(metrics::labelSet({{"vs", vs}})));
      for (const DestinationState& d : s.destinations) {
        fresh.rs.push_back(add(metrics::labelSet({{"vs", vs}, {"rs", destName(d.dest.key)}})));
      }
    }
    metric_labels_ = std::move(fresh);
  }
  const std::string_view text = metric_labels_.text;
  auto vs_label = [&](size_t i) {
    return text.substr(metric_labels_.vs[i].first, metric_labels_.vs[i].second);
  };
  auto rs_label = [&](size_t i) {
    return text.substr(metric_labels_.rs[i].first, metric_labels_.rs[i].second);
  };
  auto perService = [&](std::string_view name, Type type, std::string_view help, auto value) {
    out.family(name, type, help);
    for (size_t i = 0; i < t->services.size(); ++i) {
      out.sample(vs_label(i), static_cast<uint64_t>(value(t->services[i])));
    }
  };
  auto perDirection = [&](std::string_view name, std::string_view help, std::string_view unit,
                          auto in, auto out_of) {
    out.family(name, Type::kCounter, help, unit);
    for (size_t i = 0; i < t->services.size(); ++i) {
      out.sample(metrics::withLabel(vs_label(i), "direction", "in"), in(t->services[i].stats));
      out.sample(metrics::withLabel(vs_label(i), "direction", "out"), out_of(t->services[i].stats));
    }
  };
  auto perServer = [&](std::string_view name, Type type, std::string_view help, auto value) {
    out.family(name, type, help);
    size_t k = 0;
    for (const ServiceState& s : t->services) {
      for (const DestinationState& d : s.destinations) out.sample(rs_label(k++), value(d));
    }
  };
  perService("tandem_ipvs_connections", Type::kCounter,
             "Connections scheduled by the service (the kernel's counter)",
             [](const ServiceState& s) { return s.stats.conns; });
  perService("tandem_ipvs_connection_rate", Type::kGauge,
             "The kernel's estimate of new connections per second",
             [](const ServiceState& s) { return s.stats.cps; });
  perDirection(
      "tandem_ipvs_packets", "Packets through the service", "",
      [](const Stats& st) { return st.in_pkts; }, [](const Stats& st) { return st.out_pkts; });
  perDirection(
      "tandem_ipvs_bytes", "Bytes through the service", "bytes",
      [](const Stats& st) { return st.in_bytes; }, [](const Stats& st) { return st.out_bytes; });
  perServer("tandem_ipvs_active_connections", Type::kGauge, "Active connections of a real server",
            [](const DestinationState& d) { return static_cast<uint64_t>(d.active_conns); });
  perServer("tandem_ipvs_inactive_connections", Type::kGauge,
            "Inactive connections of a real server",
            [](const DestinationState& d) { return static_cast<uint64_t>(d.inactive_conns); });
  perServer("tandem_ipvs_real_server_connections", Type::kCounter,
            "Connections scheduled to a real server",
            [](const DestinationState& d) { return d.stats.conns; });
  perServer("tandem_ipvs_real_server_weight", Type::kGauge,
            "The real server's weight in the kernel (0: quiescent or drained)",
            [](const DestinationState& d) { return static_cast<int64_t>(d.dest.weight); });
}

uint64_t IpvsSubsystem::sumOfDestinations(
    const std::function<uint64_t(const DestinationState&)>& count) const {
  const Table* t = loop_ ? loop_->lastTable() : nullptr;
  if (t == nullptr) return 0;
  uint64_t n = 0;
  for (const auto& s : t->services) {
    for (const auto& d : s.destinations) n += count(d);
  }
  return n;
}

uint64_t IpvsSubsystem::connections() const {
  return sumOfDestinations(
      [](const DestinationState& d) { return uint64_t{d.active_conns} + d.inactive_conns; });
}

uint64_t IpvsSubsystem::templates() const {
  return sumOfDestinations([](const DestinationState& d) { return d.persistent_conns; });
}

void IpvsSubsystem::registerCommands(CommandTable& table) {
  table.add("ipvs", [this](const nlohmann::json&) { return show(); });
}

void IpvsSubsystem::tryOpen() {
  if (loop_ || !config_ || config_->virtual_servers.empty()) return;
  auto kernel =
      deps_.open
          ? deps_.open()
          : Result<std::unique_ptr<Kernel>>(fail(ErrorCode::kUnavailable, "no IPVS backend"));
  const std::string every = formatDuration(config_->ipvs.monitor_interval);
  if (!kernel) {
    if (kernel.error().message != open_error_) {
      open_error_ = kernel.error().message;
      log(LogLevel::kError, "IPVS is not available: " + open_error_ +
                                "; the cluster and the VIPs run without the " +
                                std::to_string(config_->virtual_servers.size()) +
                                " virtual server(s), trying again every " + every);
    }
    if (!retry_) retry_ = deps_.dispatcher.createTimer([this] { tryOpen(); });
    retry_->arm(config_->ipvs.monitor_interval);
    return;
  }
  if (retry_) retry_->cancel();
  const bool recovered = !open_error_.empty();
  open_error_.clear();
  kernel_ = std::move(*kernel);
  if (deps_.open_owned) owned_store_ = deps_.open_owned(config_->daemon.state_dir);
  loop_ = std::make_unique<IpvsReconcileLoop>(
      deps_.dispatcher, *kernel_, [this](LogLevel l, const std::string& line) { log(l, line); },
      owned_store_.get());
  for (const auto& [key, h] : health_) loop_->setHealth(key.first, key.second, h.up, h.weight);
  loop_->setDrained(drained_);
  log(LogLevel::kNotice, std::string(recovered ? "IPVS is available now; " : "") +
                             "keeping the IPVS table on this director whatever its role services=" +
                             std::to_string(config_->virtual_servers.size()) +
                             " monitor_interval=" + every);
  loop_->configure(*config_);
}

void IpvsSubsystem::setHealth(const std::string& virtual_server, const Endpoint& real_server,
                              bool up, std::optional<int> weight) {
  health_[{virtual_server, real_server}] = RealHealth{up, weight};
  if (loop_) loop_->setHealth(virtual_server, real_server, up, weight);
}

namespace {

std::pair<ServiceKey, DestKey> drainKey(const DrainTarget& t) {
  return {ServiceKey{t.family, t.protocol, t.address, t.port, t.fwmark},
          DestKey{t.server.address, t.server.port}};
}

}  // namespace

void IpvsSubsystem::setDrains(const std::vector<DrainTarget>& targets) {
  std::set<std::pair<ServiceKey, DestKey>> next;
  for (const DrainTarget& t : targets) next.insert(drainKey(t));
  std::map<std::pair<ServiceKey, DestKey>, size_t> since;
  for (const auto& key : next) {
    auto kept = drained_since_.find(key);
    if (kept != drained_since_.end()) {
      since.insert(*kept);
    } else {
      // A dump already under way may have read the table before the write: the one after it.
      since[key] = loop_ ? loop_->dumps() + (loop_->passRunning() ? 2 : 1) : 1;
    }
  }
  drained_ = next;
  drained_since_ = std::move(since);
  if (loop_) loop_->setDrained(std::move(next));
}

DrainProgress IpvsSubsystem::drainProgress(const DrainTarget& t) const {
  const auto key = drainKey(t);
  auto since = drained_since_.find(key);
  if (!loop_ || since == drained_since_.end() || loop_->dumps() < since->second) return {};
  const Table* table = loop_->lastTable();
  if (table == nullptr) return {};
  for (const ServiceState& s : table->services) {
    if (!(s.service.key == key.first)) continue;
    for (const DestinationState& d : s.destinations) {
      if (!(d.dest.key == key.second)) continue;
      if (d.dest.weight != 0) return {};
      return DrainProgress{d.active_conns, d.persistent_conns};
    }
  }
  return DrainProgress{0u, 0u};  // not in the table: nothing can be left on it
}

Result<nlohmann::json> IpvsSubsystem::show() {
  if (!loop_) {
    if (!open_error_.empty()) {
      return fail(ErrorCode::kUnavailable,
                  "IPVS is not available on this director: " + open_error_ +
                      " (tandemd tries again every " +
                      formatDuration(config_->ipvs.monitor_interval) + ")");
    }
    return fail(ErrorCode::kUnavailable,
                "tandemd manages no IPVS services: the config has no [[virtual_server]]");
  }
  // The kernel's table as the last complete pass left it: no dump on the loop per request.
  const Table* table = loop_->lastTable();
  if (table == nullptr) {
    return fail(ErrorCode::kUnavailable,
                "cannot read the IPVS table: no reconcile pass has completed since the last error "
                "(see the log; tandemd tries again every " +
                    formatDuration(config_->ipvs.monitor_interval) + ")");
  }
  return ipvsJson(
      *table, *config_,
      IpvsView{loop_->lastPassOk(), config_->ipvs.monitor_interval, &health_, &drained_});
}

}  // namespace tandem::resources::ipvs
