#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "core/event_commands.h"
#include "core/subsystem.h"
#include "health/check_policy.h"
#include "health/checker.h"
#include "loop/dispatcher.h"
#include "process/child_runner.h"

// Real-server health checks, on every director whatever its role, so that a director taking
// over already knows which real servers are healthy. Each checked real server has a monitor:
// a probe every interval (the first at a random offset), its results counted by RiseFall, and
// each change of state logged once with its reason and handed on (the registry hands it to
// IPVS, which sets the weight, removes the server or installs the fallback). A server back
// from down ramps up over its service's slow_start; an exec check with exit_weight sets the
// weight. Each change of a real server and of a service (none up, or one back) runs the
// service's notify command. Not a start/stop resource: it holds nothing that moves.
namespace tandem::resources::health {

// A real server's health changed: up or down, and while up the weight it should have when that
// is not its configured weight (unset: the configured one).
using HealthChanged =
    std::function<void(const std::string& virtual_server, const Endpoint& real_server, bool up,
                       std::optional<int> weight)>;

// One change of a real server's state, kept in a bounded history.
struct HealthEvent {
  uint64_t at_ms = 0;  // wall clock
  std::string virtual_server;
  Endpoint real_server;
  bool up = false;
  std::string check;   // "tcp"
  std::string reason;  // the result that decided it
};

struct HealthDeps {
  loop::Dispatcher& dispatcher;
  MakeChecker make_checker;
  std::function<uint16_t()> random16;
  std::function<uint64_t()> wall_clock_ms;
  LogSink log;
  HealthChanged on_change;  // may be unset
  // The share of checked real servers that are up, per mille, whenever it changes: 1000 with
  // no checks, election::kHealthNoRealServer (1) when none is up. May be unset.
  std::function<void(int permille)> on_share;
  process::ChildRunner* children = nullptr;          // for notify commands; null: none run
  std::string node;                                  // this director, for the notify environment
  std::function<void(const HealthEvent&)> on_event;  // each transition; may be unset
};

class HealthSubsystem final : public Subsystem {
 public:
  static constexpr size_t kHistory = 100;
  // Real servers listed in status(), the down ones first: the admin channel's 1 MiB holds
  // about 5,000 of them.
  static constexpr size_t kStatusServers = 2000;

  explicit HealthSubsystem(HealthDeps deps);
  ~HealthSubsystem() override;
  HealthSubsystem(const HealthSubsystem&) = delete;
  HealthSubsystem& operator=(const HealthSubsystem&) = delete;

  std::string_view name() const override { return "health"; }
  // Keeps the monitor of each real server whose check did not change (its state and counts
  // too); starts one for each new or changed check, from the check's initial state; drops the
  // rest, whose servers count as up again.
  void configure(const config::Config& next, const config::Config* running,
                 const config::ReloadDiff& diff) override;
  nlohmann::json status() const override;
  // Each checked real server up or down, the healthy servers per service, and the checks run,
  // failed and their durations by type.
  void writeMetrics(metrics::Exposition& out) const override;
  void shutdown() override;

  // Checked real servers, and how many of them are up.
  size_t checked() const { return monitors_.size(); }
  size_t up() const;
  // Whether a checked real server is up; unchecked ones are not known here.
  std::optional<bool> isUp(const std::string& virtual_server, const Endpoint& real_server) const;
  const std::deque<HealthEvent>& history() const { return history_; }

 private:
  struct Monitor;
  using Key = std::pair<std::string, Endpoint>;

  // Per virtual server: what its notify needs, and how many of its real servers are up
  // (unchecked ones always are).
  struct Service {
    std::optional<config::Command> notify;
    Millis notify_timeout{10000};
    size_t unchecked = 0;
    size_t checked_up = 0;
    bool up() const { return unchecked + checked_up > 0; }
  };

  void runProbe(Monitor& m);
  void onResult(Monitor& m, ProbeResult r);
  void tickRamp(Monitor& m);
  // The weight m should have now; unset while it is the configured one.
  std::optional<int> weightNow(const Monitor& m) const;
  // Hands m's state on to IPVS when it differs from what was last handed on.
  void report(Monitor& m);
  void notify(const std::string& event, const std::string& virtual_server, const Endpoint* rs,
              const std::string& reason);
  void reportShare();
  void log(LogLevel level, const std::string& line) const;

  HealthDeps deps_;
  std::map<Key, std::unique_ptr<Monitor>> monitors_;
  std::map<std::string, Service> services_;
  EventCommands commands_;
  std::deque<HealthEvent> history_;
  int share_ = 1000;  // last reported
  // By check type (config::CheckType's order), since the start.
  struct TypeStats {
    uint64_t run = 0;
    uint64_t failed = 0;
    metrics::Histogram took{metrics::Histogram::checkBounds()};
  };
  std::array<TypeStats, 8> by_type_;
  // The real servers' label sets in one buffer, in monitors_'s order, made again after a
  // configure: a scrape reads them front to back.
  mutable std::string metric_labels_;
  mutable std::vector<std::pair<const Monitor*, std::pair<uint32_t, uint32_t>>> metric_index_;
  mutable bool metric_labels_stale_ = true;
};

}  // namespace tandem::resources::health
