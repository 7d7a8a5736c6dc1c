#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/result.h"
#include "common/sync_report.h"
#include "config/config.h"
#include "core/subsystem.h"
#include "ipvs/ipvs_model.h"
#include "loop/dispatcher.h"
#include "sync/sync_tap.h"

// IPVS connection sync: the kernel's sync daemons, driven over generic netlink. The backup
// daemon runs on every director, whatever its role, so a director that takes over (or returns
// for a failback) already holds the ACTIVE's connections. The master daemon is what the ACTIVE
// holds: a resource in Stage::kSync, taken before the IPVS table and the VIPs, released after
// them.
namespace tandem::resources::sync {

using OpenSyncKernel = std::function<Result<std::unique_ptr<ipvs::SyncKernel>>()>;

struct SyncDeps {
  loop::Dispatcher& dispatcher;
  OpenSyncKernel open;  // the platform's generic netlink socket, or a fake
  LogSink log;
  std::function<int64_t()> wall_ms;  // for "since" in the status; may be unset
  // This director's connection table and its persistence templates (IPVS's last dump), and
  // where each pass reports them with whether the backup daemon runs and when it last heard a
  // sync message (the heartbeats' fields). Each may be unset.
  std::function<uint64_t()> connections;
  std::function<uint64_t()> templates;
  std::function<void(const SyncReport&)> report;
  // A listener beside the backup daemon (what it hears, for the status); may be unset.
  OpenSyncTap open_tap;
};

// The daemon of each state that [sync] asks for on this director: the backup always (when
// enabled), the master while held.
ipvs::SyncDaemon desiredDaemon(const config::Sync& sync, ipvs::SyncState state);
// Whether a running daemon is the one wanted. The message length is left out: the kernel
// clamps it to the interface's MTU, so what it reports may differ from what was asked, and a
// change of max_message_length restarts the daemons from configure() instead.
bool sameDaemon(const ipvs::SyncDaemon& running, const ipvs::SyncDaemon& wanted);

// Keeps the kernel's sync daemons as [sync] and the role say. Each change (start, reload, a
// takeover, a release) and every [ipvs] monitor_interval runs one pass: read the running
// daemons, stop those that differ or are not wanted, start those missing. A daemon wanted and
// gone (`ipvsadm --stop-daemon` behind tandem's back, a crash of its kernel thread) is restarted
// and logged as a warning. Passes run one at a time; a request during a pass gets the next one.
// With [sync] enabled = false tandem leaves every daemon alone, except those it ran itself
// before a reload disabled it, which it stops. At shutdown the backup keeps running, so that
// a restarted tandemd finds the table current; the master has been released by then.
class SyncSubsystem final : public Subsystem {
 public:
  SyncSubsystem(SyncDeps deps, std::string self);
  ~SyncSubsystem() override;
  SyncSubsystem(const SyncSubsystem&) = delete;
  SyncSubsystem& operator=(const SyncSubsystem&) = delete;

  std::string_view name() const override { return "sync"; }
  void configure(const config::Config& next, const config::Config* running,
                 const config::ReloadDiff& diff) override;
  Result<void> start() override;
  std::vector<HeldResource> held() override;
  nlohmann::json status() const override;
  // The daemons running, the connection table, and what the backup heard.
  void writeMetrics(metrics::Exposition& out) const override;
  // "sync": the status's sync object (`tandem sync status`).
  void registerCommands(CommandTable& table) override;
  void shutdown() override;

  // The master role (the resource's start/stop) and its monitor.
  void wantMaster(bool on, Done done);
  void verify(Done done);
  // The master runs as wanted, as the last pass saw it.
  bool masterRunning() const { return seen_[kMaster].running; }
  uint64_t passes() const { return passes_; }
  uint64_t restarts() const { return restarts_; }

 private:
  static constexpr size_t kBackup = 0;
  static constexpr size_t kMaster = 1;
  struct Seen {
    bool running = false;
    std::optional<ipvs::SyncDaemon> daemon;  // as the kernel reported it
    int64_t since_ms = 0;
    bool started_by_us = false;  // this process started it (and has not seen it go)
  };
  struct Step {
    enum class Kind { kStop, kStart } kind;
    ipvs::SyncDaemon daemon;
    bool restart = false;  // a wanted daemon that went away behind tandem's back
  };

  void log(LogLevel level, const std::string& line) const;
  void converge(Done done);
  void startPass();
  void onDaemons(Result<std::vector<ipvs::SyncDaemon>> listed);
  void runSteps();
  void passDone();
  bool wanted(size_t state) const;
  // Enabled now, or this process runs a daemon it started before a reload disabled sync.
  bool manages() const {
    return sync_.enabled || seen_[kBackup].started_by_us || seen_[kMaster].started_by_us;
  }
  std::string describe(const ipvs::SyncDaemon& d) const;
  // The tap follows the backup daemon the last pass saw: opened where it listens, closed
  // when it stops; a tap that cannot open is tried again at the next pass.
  void updateTap();
  void onDatagram(std::span<const uint8_t> datagram, const IpAddress& from);
  int64_t wallMs() const { return deps_.wall_ms ? deps_.wall_ms() : 0; }
  SyncReport syncReport() const;
  // To deps_.report: after each pass, and when the backup hears the master again more than a
  // second after what was last reported (so the heartbeats' "heard" age is never staler).
  void report();

  SyncDeps deps_;
  std::string self_;
  config::Sync sync_;
  bool configured_ = false;
  Millis interval_{5000};
  bool want_master_ = false;
  bool force_restart_ = false;  // the next pass restarts what runs (max_message_length changed)
  std::unique_ptr<ipvs::SyncKernel> kernel_;
  std::string open_error_;
  std::unique_ptr<loop::Timer> timer_;
  std::shared_ptr<Resource> master_;
  std::array<Seen, 2> seen_{};
  // Pass state: one at a time.
  bool running_ = false;
  std::vector<Done> waiting_;  // for the next pass
  std::vector<Done> current_;  // for the running one
  std::vector<Step> steps_;
  size_t next_step_ = 0;
  std::string pass_error_;
  std::string last_error_;
  uint64_t passes_ = 0;
  uint64_t restarts_ = 0;
  // What the backup daemon hears, since tandemd started.
  struct Heard {
    uint64_t messages = 0;  // for this backup's sync id (or any, with sync id 0)
    uint64_t connections = 0;
    int64_t last_ms = 0;  // 0: none yet
    std::optional<IpAddress> from;
    uint64_t other_id = 0;  // for another sync id: the kernel drops them
    std::optional<uint8_t> last_other_id;
    std::array<bool, 256> other_ids_logged{};
    uint64_t malformed = 0;
    std::string last_malformed;
    std::optional<loop::MonoTime> malformed_logged;
  };
  std::unique_ptr<SyncTap> tap_;
  std::optional<ipvs::SyncDaemon> tap_for_;
  std::string tap_error_;
  Heard heard_;
  int64_t reported_heard_ms_ = 0;  // heard_.last_ms as last reported
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace tandem::resources::sync
