#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/duration.h"
#include "common/log.h"
#include "common/result.h"
#include "config/config.h"
#include "ipvs/ipvs_desired.h"
#include "ipvs/ipvs_model.h"
#include "ipvs/ipvs_plan.h"
#include "ipvs/owned_services.h"
#include "loop/dispatcher.h"

// The shell around the planner: dump the kernel's table, plan, apply; the loop that does it
// every [ipvs] monitor_interval and whenever the config or a real server's health changes.
namespace tandem::resources::ipvs {

using IpvsLog = LogSink;

// "tcp 198.51.100.10:80", "udp [2001:db8::10]:53", "fwmark 7 (IPv6)"; "198.51.100.21:80".
// The reconciler's own wording, so its log lines do not depend on the codec's.
std::string serviceName(const ServiceKey& key);
std::string destName(const DestKey& key);
// "add service tcp 198.51.100.10:80 scheduler=wlc", "edit real server 198.51.100.21:80 of tcp
// 198.51.100.10:80 weight=0 forward=dr".
std::string describe(const Op& op);

struct ReconcileReport {
  size_t applied = 0;  // requests that succeeded
  size_t replans = 0;  // re-dumps after EEXIST/ENOENT
  size_t drift = 0;    // differences from what tandem last applied, found before applying
  size_t dumps = 0;    // whole-table dumps this pass read
};

// What a pass is for.
enum class Pass {
  // Read the kernel's whole table, repair any drift, apply: the monitor pass, and the first.
  kVerify,
  // The desired table changed (a reload, a health change): plan against the table the last
  // complete pass left in the kernel (every request of it acknowledged, on top of a dumped
  // table) and send only the changes, without a dump. Without such a table, or when the kernel
  // disagrees with it (EEXIST/ENOENT), the pass dumps and re-plans as kVerify does. What the
  // kernel gained behind tandem's back in between is the next kVerify pass's to find.
  kChange,
};

// Keeps the kernel's IPVS table at a desired table. EEXIST/ENOENT from a request mean the table
// moved under us (another tool, a racing reload): re-dump and re-plan, a bounded number of
// times. Whatever differs from what tandem itself last applied is drift: repaired, and logged
// as a warning naming what it looks like someone did ("virtual service tcp 198.51.100.10:80
// was deleted behind tandem's back (ipvsadm -D?); restored").
//
// Asynchronous and sliced, so that a first apply of 11,000 rules never holds the loop: at most
// kMaxInFlight requests are in flight (starting from one, growing by one per acknowledged
// request, so an early refusal costs one request, not a window of them), and after every
// kSliceRequests requests the next one is sent from a fresh loop iteration. One pass at a time;
// its completion comes from the loop (or before reconcile() returns, with a kernel that answers
// at once). Destroying the reconciler, or cancel(), drops a running pass without calling back.
//
// With an OwnedStore, the services tandem owns outlive the process: read at construction (a
// line that names no service is a warning naming the file and line, and is skipped), written
// after each pass that changed them.
class Reconciler {
 public:
  static constexpr int kMaxReplans = 3;
  static constexpr size_t kMaxInFlight = 32;
  static constexpr size_t kSliceRequests = 256;
  // Desired services planned per loop iteration (x 10 real servers: about kSliceRequests' worth
  // of planning, a millisecond or two natively and tens under the VM's emulation).
  static constexpr size_t kPlanServicesPerStep = 100;

  using ReconcileDone = std::function<void(Result<ReconcileReport>)>;
  using TimeoutsDone = std::function<void(Result<void>)>;

  Reconciler(loop::Dispatcher& dispatcher, Kernel& kernel, IpvsLog log,
             OwnedStore* owned_store = nullptr);
  ~Reconciler();
  Reconciler(const Reconciler&) = delete;
  Reconciler& operator=(const Reconciler&) = delete;

  // Starts a pass; one at a time (busy()).
  void reconcile(Table desired, bool manage_all, Pass pass, ReconcileDone done);
  // Sets the global timeouts that want names (non-zero) and the kernel does not already have;
  // writes nothing when they match.
  void applyTimeouts(const Timeouts& want, TimeoutsDone done);
  // Abandons the running pass (its requests in flight are ignored when they complete; the next
  // pass dumps) and the running timeouts check. No completion is called.
  void cancel();
  bool busy() const { return run_ != nullptr || timeouts_running_; }

  // Services tandem owns: in the last desired table it applied, plus any it has applied before
  // and not yet seen deleted (so a service dropped from the config is removed even with
  // manage = "owned").
  const std::set<ServiceKey>& owned() const { return owned_; }
  // The kernel's table as the last complete pass left it, in key order: the table it dumped
  // (or, without a dump, the one before) plus every request of it the kernel acknowledged. Null
  // before the first complete pass and after a failed one (then nobody knows what the kernel
  // holds).
  const Table* kernelTable() const { return kernel_table_ ? &*kernel_table_ : nullptr; }

 private:
  struct Run;

  // How the kernel differs from what tandem last applied, for the services it still wants:
  // one line each, naming what it looks like someone did. Both tables in key order.
  // base: what the kernel should hold (null: nothing known, no drift).
  std::vector<std::string> findDrift(const Table& actual, const Table* base,
                                     const std::set<ServiceKey>& wanted) const;
  void log(LogLevel level, const std::string& line) const;
  void loadOwned();
  void saveOwned();

  void startAttempt();
  void onDumped(Result<Table> dumped);
  // Runs step from a fresh loop iteration (one step at a time; finish() and cancel() drop it).
  void nextStep(void (Reconciler::*step)());
  void sortAndCheckDrift();
  void planAgainstDump();
  // Plans the pass against actual, kPlanServicesPerStep desired services per loop iteration,
  // then sends it.
  void startPlan(const Table& actual);
  void planSome();
  void pump();
  void onAnswer(const Op& op, Result<void> r);
  void attemptDone();
  void finish(Result<ReconcileReport> r);
  void giveUp(Error e);
  // Wraps a kernel completion so that it does nothing once the pass it belongs to is over.
  template <typename T>
  KernelDone<T> guard(std::function<void(Result<T>)> f);

  loop::Dispatcher& dispatcher_;
  Kernel& kernel_;
  IpvsLog log_;
  OwnedStore* owned_store_;
  // The desired table of the last complete reconcile, in key order, and its manage_all.
  std::optional<Table> last_applied_;
  bool last_manage_all_ = false;
  std::optional<Table> kernel_table_;
  std::set<ServiceKey> owned_;
  std::set<ServiceKey> saved_owned_;  // what owned_store_ holds
  std::string save_error_;            // the last failed write's message, logged once
  std::unique_ptr<Run> run_;
  uint64_t generation_ = 0;  // of the running pass; answers for an older one are ignored
  bool timeouts_running_ = false;
  std::unique_ptr<loop::Timer> yield_;
  std::unique_ptr<loop::Timer> step_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Runs the reconciler every monitor_interval on the dispatcher (kVerify: a dump, drift
// repaired), and at once when the config or the health changes (kChange: only the changes).
// Only kVerify passes restart the interval, so however often the desired table changes, the
// kernel is read at least once per interval. A failed pass is logged (once while the error stays
// the same) and tried again at the next interval.
//
// Passes run one at a time, across loop iterations. A change (configure, setHealth,
// reconcileNow, the interval) while one runs is queued: the next pass starts when the running
// one ends, from the newest config and health (a queued kVerify wins over a queued kChange).
class IpvsReconcileLoop {
 public:
  IpvsReconcileLoop(loop::Dispatcher& dispatcher, Kernel& kernel, IpvsLog log,
                    OwnedStore* owned_store = nullptr);

  // Takes (or replaces, on reload) the config and reconciles now: the first config with a
  // kVerify pass, a reload with a kChange pass (kVerify when it changes monitor_interval or
  // manage).
  void configure(const config::Config& cfg);
  // A real server's health changed: reconcile now (kChange) if that changes the desired table.
  void setHealth(const std::string& virtual_server, const Endpoint& real_server, bool up,
                 std::optional<int> weight = std::nullopt);
  // The drained real servers (Health::setDrained): reconcile now (kChange) if that changes the
  // desired table.
  void setDrained(std::set<std::pair<ServiceKey, DestKey>> drained);
  // Reconciles now (kVerify) and restarts the interval.
  void reconcileNow();
  // Completed kVerify passes without an error: dumps of the kernel's table since the start.
  size_t dumps() const { return dumps_; }
  // Cancels the interval and abandons a running pass (its completion is never called).
  void stop();

  const Reconciler& reconciler() const { return reconciler_; }
  // Completed passes.
  size_t passes() const { return passes_; }
  bool lastPassOk() const { return last_error_.empty() && passes_ > 0; }
  // The kernel's table as the last complete pass left it (Reconciler::kernelTable()): what
  // `tandem ipvs show` answers from without a dump. Null before the first complete pass.
  const Table* lastTable() const { return reconciler_.kernelTable(); }
  // When the last dump (a kVerify pass without error) completed; nullopt before the first.
  std::optional<loop::MonoTime> lastDumpAt() const { return last_dump_at_; }
  bool passRunning() const { return running_; }

 private:
  void pass(Pass kind);
  void passDone(Pass kind, const std::string& error);

  loop::Dispatcher& dispatcher_;
  Reconciler reconciler_;
  IpvsLog log_;
  std::optional<config::Config> config_;
  Health health_;
  Table desired_;
  std::unique_ptr<loop::Timer> timer_;
  size_t passes_ = 0;
  size_t dumps_ = 0;
  std::optional<loop::MonoTime> last_dump_at_;
  std::string last_error_;
  bool running_ = false;
  std::optional<Pass> queued_;
};

}  // namespace tandem::resources::ipvs
