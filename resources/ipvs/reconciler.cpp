#include "ipvs/reconciler.h"

#include <linux/ip_vs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cassert>
#include <map>
#include <utility>
#include <vector>

#include "ipvs/ipvs_plan.h"

namespace tandem::resources::ipvs {

namespace {

std::string serviceFields(const Service& s) {
  std::string out = "scheduler=" + s.scheduler;
  if (s.flags & ~static_cast<uint32_t>(IP_VS_SVC_F_HASHED)) {
    out += " flags=0x" + [&] {
      char buf[16];
      snprintf(buf, sizeof buf, "%x", s.flags & ~static_cast<uint32_t>(IP_VS_SVC_F_HASHED));
      return std::string(buf);
    }();
  }
  if (s.flags & IP_VS_SVC_F_PERSISTENT) out += " persistence=" + std::to_string(s.timeout_s) + "s";
  return out;
}

std::string destFields(const Destination& d) {
  std::string out = "weight=" + std::to_string(d.weight) + " forward=" + forwardName(d.forward);
  if (d.upper_threshold != 0) out += " upper_threshold=" + std::to_string(d.upper_threshold);
  if (d.lower_threshold != 0) out += " lower_threshold=" + std::to_string(d.lower_threshold);
  return out;
}

bool retryable(const Error& e) {
  return e.code == ErrorCode::kAlreadyExists || e.code == ErrorCode::kNotFound;
}

// At most this many changes are logged one by one; a bigger pass (the first one on an empty
// table) is logged as counts.
constexpr size_t kOpsLoggedOneByOne = 20;

// What a pass applied: the first changes themselves, for the log, and how many of each kind.
// Not a copy of each: a first apply acknowledges 11,000 of them on the loop.
struct Applied {
  std::vector<Op> first;
  size_t count[6] = {};
  size_t total = 0;
  void add(const Op& op) {
    if (first.size() <= kOpsLoggedOneByOne) first.push_back(op);
    ++count[static_cast<size_t>(op.kind)];
    ++total;
  }
};

std::string summary(const Applied& applied) {
  const size_t* n = applied.count;
  return "applied " + std::to_string(applied.total) + " IPVS changes: services +" +
         std::to_string(n[0]) + " ~" + std::to_string(n[1]) + " -" + std::to_string(n[2]) +
         ", real servers +" + std::to_string(n[3]) + " ~" + std::to_string(n[4]) + " -" +
         std::to_string(n[5]);
}

// Sorts t into key order. The tables it is handed mostly are (a netlink dump, desiredTable), and
// checking costs a fraction of sorting: this runs on the loop, over 11,000 entries.
void sortTable(Table& t) {
  auto by_service = [](const ServiceState& a, const ServiceState& b) {
    return a.service.key < b.service.key;
  };
  auto by_dest = [](const DestinationState& a, const DestinationState& b) {
    return a.dest.key < b.dest.key;
  };
  if (!std::is_sorted(t.services.begin(), t.services.end(), by_service)) {
    std::sort(t.services.begin(), t.services.end(), by_service);
  }
  for (auto& s : t.services) {
    if (!std::is_sorted(s.destinations.begin(), s.destinations.end(), by_dest)) {
      std::sort(s.destinations.begin(), s.destinations.end(), by_dest);
    }
  }
}

}  // namespace

std::string serviceName(const ServiceKey& key) {
  if (key.fwmark != 0) {
    return "fwmark " + std::to_string(key.fwmark) + " (" + std::string(familyName(key.family)) +
           ")";
  }
  return protocolName(key.protocol) + " " + hostPort(key.address, key.port);
}

std::string destName(const DestKey& key) { return hostPort(key.address, key.port); }

std::string describe(const Op& op) {
  const std::string svc = serviceName(op.service.key);
  auto dest = [&](const char* verb) {
    std::string out = std::string(verb) + " real server " +
                      (op.dest ? destName(op.dest->key) : std::string("?")) + " of " + svc;
    if (op.dest && op.kind != Op::Kind::kDelDest) out += " " + destFields(*op.dest);
    return out;
  };
  switch (op.kind) {
    case Op::Kind::kAddService:
      return "add virtual service " + svc + " " + serviceFields(op.service);
    case Op::Kind::kEditService:
      return "edit virtual service " + svc + " " + serviceFields(op.service);
    case Op::Kind::kDelService:
      return "delete virtual service " + svc;
    case Op::Kind::kAddDest:
      return dest("add");
    case Op::Kind::kEditDest:
      return dest("edit");
    case Op::Kind::kDelDest:
      return dest("delete");
  }
  return "?";
}

// One pass: its inputs, where it is, and what it has done so far.
struct Reconciler::Run {
  Table desired;
  bool manage_all = false;
  Pass pass = Pass::kVerify;
  ReconcileDone done;
  std::set<ServiceKey> wanted;
  std::set<ServiceKey> retired;
  bool incremental = false;
  ReconcileReport report;
  Applied done_ops;
  std::vector<std::string> drift;
  bool drift_checked = false;
  int attempt = 0;
  // The next step after a dump, run from a fresh loop iteration (see onDumped).
  void (Reconciler::*step)() = nullptr;
  std::optional<Planner> planner;  // while the plan is being made
  std::vector<Op> ops;
  size_t next = 0;  // the next op of ops to send
  size_t in_flight = 0;
  size_t window = 1;
  size_t sent_in_slice = 0;
  bool yielding = false;
  bool pumping = false;
  bool pump_again = false;
  bool replan = false;
  std::optional<Error> failure;
  std::string failure_reason;  // the kernel's refusal, for the drift it left unrepaired
};

Reconciler::Reconciler(loop::Dispatcher& dispatcher, Kernel& kernel, IpvsLog log,
                       OwnedStore* owned_store)
    : dispatcher_(dispatcher), kernel_(kernel), log_(std::move(log)), owned_store_(owned_store) {
  yield_ = dispatcher_.createTimer([this] {
    if (!run_) return;
    run_->yielding = false;
    run_->sent_in_slice = 0;
    pump();
  });
  step_ = dispatcher_.createTimer([this] {
    if (!run_ || run_->step == nullptr) return;
    auto step = std::exchange(run_->step, nullptr);
    (this->*step)();
  });
  loadOwned();
}

Reconciler::~Reconciler() { *alive_ = false; }

void Reconciler::log(LogLevel level, const std::string& line) const {
  if (log_) log_(level, line);
}

void Reconciler::loadOwned() {
  if (owned_store_ == nullptr) return;
  auto text = owned_store_->read();
  if (!text) {
    log(LogLevel::kWarning,
        text.error().message +
            "; the virtual services tandem owned before this start are not known: one dropped "
            "from the config meanwhile stays in the kernel (remove it with ipvsadm -D)");
    return;
  }
  if (!*text) return;  // a first start
  ParsedOwned parsed = parseOwned(**text, owned_store_->path());
  for (const auto& w : parsed.warnings) log(LogLevel::kWarning, w);
  owned_ = parsed.keys;
  saved_owned_ = parsed.keys;
  if (!owned_.empty()) {
    log(LogLevel::kInfo, "tandem owned " + std::to_string(owned_.size()) +
                             " virtual service(s) before this start file=" + owned_store_->path());
  }
}

void Reconciler::saveOwned() {
  if (owned_store_ == nullptr || owned_ == saved_owned_) return;
  auto r = owned_store_->write(formatOwned(owned_));
  if (!r) {
    if (r.error().message != save_error_) {
      save_error_ = r.error().message;
      log(LogLevel::kWarning,
          save_error_ +
              "; after a restart tandem may not remove a virtual service dropped from "
              "the config meanwhile (trying again after each pass)");
    }
    return;
  }
  save_error_.clear();
  saved_owned_ = owned_;
}

template <typename T>
KernelDone<T> Reconciler::guard(std::function<void(Result<T>)> f) {
  return [alive = std::weak_ptr<bool>(alive_), gen = generation_, this,
          f = std::move(f)](Result<T> r) {
    if (alive.expired() || gen != generation_ || !run_) return;
    f(std::move(r));
  };
}

void Reconciler::reconcile(Table desired, bool manage_all, Pass pass, ReconcileDone done) {
  assert(!busy());
  ++generation_;
  run_ = std::make_unique<Run>();
  Run& run = *run_;
  run.desired = std::move(desired);
  run.manage_all = manage_all;
  run.pass = pass;
  run.done = std::move(done);
  for (const auto& s : run.desired.services) run.wanted.insert(s.service.key);
  for (const auto& k : owned_) {
    if (run.wanted.count(k) == 0) run.retired.insert(k);
  }
  // Until this pass completes, tandem owns both what it had and what it is adding.
  owned_.insert(run.wanted.begin(), run.wanted.end());
  // Without a dump, plan against what the last complete pass left in the kernel; a changed
  // manage may own services that table does not show, so it dumps. Then last_applied_ follows
  // each acknowledged request (in place: no copy of a big table), so it stays what the kernel
  // should hold: the base for drift after a fallback dump, and, when no dump was needed, the
  // desired table itself at the end.
  run.incremental = pass == Pass::kChange && last_applied_.has_value() &&
                    last_manage_all_ == manage_all && kernel_table_.has_value();
  startAttempt();
}

void Reconciler::startAttempt() {
  Run& run = *run_;
  run.replan = false;
  run.failure.reset();
  run.next = 0;
  run.window = 1;
  if (run.incremental && run.attempt == 0) {
    startPlan(*last_applied_);
    return;
  }
  kernel_.dump(guard<Table>([this](Result<Table> t) { onDumped(std::move(t)); }));
}

void Reconciler::onDumped(Result<Table> dumped) {
  Run& run = *run_;
  ++run.report.dumps;
  if (!dumped) {
    Error e{dumped.error().code, "cannot read the IPVS table: " + dumped.error().message};
    if (run.attempt > 0) {
      giveUp(std::move(e));
      return;
    }
    saveOwned();
    finish(fail(std::move(e)));
    return;
  }
  kernel_table_ = std::move(*dumped);
  // What follows a dump of 11,000 rules costs milliseconds natively and tens of them under
  // emulation: each step runs from a loop iteration of its own, after the heartbeats due.
  nextStep(&Reconciler::sortAndCheckDrift);
}

void Reconciler::nextStep(void (Reconciler::*step)()) {
  run_->step = step;
  step_->arm(Millis(0));
}

void Reconciler::sortAndCheckDrift() {
  Run& run = *run_;
  // In key order (NetlinkKernel dumps so; a fake need not), so that applyOp can follow the
  // acknowledged requests, and findDrift can walk it beside last_applied_.
  sortTable(*kernel_table_);
  if (!run.drift_checked) {
    run.drift = findDrift(*kernel_table_, last_applied_ ? &*last_applied_ : nullptr, run.wanted);
    run.drift_checked = true;
  }
  nextStep(&Reconciler::planAgainstDump);
}

void Reconciler::planAgainstDump() { startPlan(*kernel_table_); }

void Reconciler::startPlan(const Table& actual) {
  Run& run = *run_;
  run.ops.clear();
  // Room for the largest likely plan (everything added, every service of actual deleted), so
  // that the steps do not copy a growing vector of 11,000 requests.
  size_t most = actual.services.size();
  for (const auto& svc : run.desired.services) most += 1 + svc.destinations.size();
  run.ops.reserve(most);
  run.planner.emplace(run.desired, actual, run.manage_all, run.retired);
  planSome();
}

void Reconciler::planSome() {
  Run& run = *run_;
  // Nothing is sent until the plan is complete: the table it reads stays as it was.
  if (!run.planner->next(kPlanServicesPerStep, run.ops)) {
    nextStep(&Reconciler::planSome);
    return;
  }
  run.planner.reset();
  pump();
}

void Reconciler::pump() {
  if (!run_) return;
  Run& run = *run_;
  // A kernel that answers before apply() returns would otherwise recurse once per request.
  if (run.pumping) {
    run.pump_again = true;
    return;
  }
  run.pumping = true;
  std::weak_ptr<bool> alive = alive_;
  const uint64_t gen = generation_;
  // What this pump sends goes to the kernel together: a window's worth in one datagram. The
  // kernel outlives the reconciler (its owner declares it first), so it is uncorked even when
  // a completion ended the pass or the reconciler.
  Kernel& kernel = kernel_;
  kernel.cork();
  do {
    run.pump_again = false;
    while (!run.replan && !run.failure && run.next < run.ops.size() && run.in_flight < run.window &&
           !run.yielding) {
      if (run.sent_in_slice == kSliceRequests) {
        // Let the loop run its timers and other fds before the next slice.
        run.yielding = true;
        yield_->arm(Millis(0));
        break;
      }
      const size_t i = run.next++;
      ++run.in_flight;
      ++run.sent_in_slice;
      // ops stays as it is until the attempt is done: onAnswer may take it by reference.
      kernel_.apply(run.ops[i], guard<void>([this, i](Result<void> r) {
                      onAnswer(run_->ops[i], std::move(r));
                    }));
      if (alive.expired() || gen != generation_ || !run_) {
        kernel.uncork();
        return;
      }
    }
  } while (run.pump_again);
  run.pumping = false;
  kernel.uncork();
  if (run.in_flight == 0 && (run.replan || run.failure || run.next == run.ops.size())) {
    attemptDone();
  }
}

void Reconciler::onAnswer(const Op& op, Result<void> r) {
  Run& run = *run_;
  --run.in_flight;
  if (r) {
    ++run.report.applied;
    run.done_ops.add(op);
    if (run.incremental && last_applied_) applyOp(*last_applied_, op);
    if (kernel_table_) applyOp(*kernel_table_, op);
    if (op.kind == Op::Kind::kDelService) owned_.erase(op.service.key);
    run.window = std::min(run.window + 1, kMaxInFlight);
  } else if (!run.replan && !run.failure) {
    // The first refusal of this attempt decides; the requests already in flight behind it
    // are answered but send nothing more.
    if (retryable(r.error()) && run.attempt < kMaxReplans) {
      // The table moved under us: what we planned against is stale.
      log(LogLevel::kInfo, describe(op) + ": " + r.error().message +
                               "; the table changed meanwhile, reading it again");
      ++run.report.replans;
      run.replan = true;
    } else {
      run.failure_reason = r.error().message;
      run.failure = Error{r.error().code,
                          describe(op) + " failed: " + r.error().message +
                              (retryable(r.error()) ? " (the table kept changing under tandem; "
                                                      "will try again at the next pass)"
                                                    : "")};
    }
  }
  pump();
}
void Reconciler::attemptDone() {
  Run& run = *run_;
  if (run.replan) {
    ++run.attempt;
    startAttempt();
    return;
  }
  auto log_done = [&] {
    if (run.done_ops.total <= kOpsLoggedOneByOne) {
      for (const Op& d : run.done_ops.first) log(LogLevel::kNotice, describe(d));
    } else {
      log(LogLevel::kNotice, summary(run.done_ops));
    }
  };
  if (run.failure) {
    log_done();
    for (const auto& d : run.drift) {
      log(LogLevel::kWarning, d + "; could not restore it: " + run.failure_reason);
    }
    giveUp(*run.failure);
    return;
  }
  log_done();
  for (const auto& d : run.drift) log(LogLevel::kWarning, d + "; restored");
  run.report.drift = run.drift.size();
  for (const auto& k : run.retired) owned_.erase(k);
  last_manage_all_ = run.manage_all;
  if (!(run.incremental && run.report.dumps == 0)) {
    // Otherwise last_applied_ followed every request of the plan: it is the desired table.
    last_applied_ = std::move(run.desired);
    sortTable(*last_applied_);
  }
  saveOwned();
  finish(run.report);
}

void Reconciler::giveUp(Error e) {
  // Part of a plan may have gone in: the kernel now holds neither table, and what tandem
  // finds next time is its own doing as much as anyone's.
  last_applied_.reset();
  saveOwned();
  finish(fail(std::move(e)));
}

void Reconciler::finish(Result<ReconcileReport> r) {
  // After a failed pass nobody knows what the kernel holds until the next dump.
  if (!r) kernel_table_.reset();
  ReconcileDone done = std::move(run_->done);
  run_.reset();
  ++generation_;
  yield_->cancel();
  step_->cancel();
  if (done) done(std::move(r));
}

void Reconciler::cancel() {
  ++generation_;
  timeouts_running_ = false;
  if (!run_) return;
  run_.reset();
  yield_->cancel();
  step_->cancel();
  // Abandoned halfway: what the kernel holds is known again only from a dump.
  last_applied_.reset();
  kernel_table_.reset();
}

std::vector<std::string> Reconciler::findDrift(const Table& actual, const Table* base,
                                               const std::set<ServiceKey>& wanted) const {
  // Both tables are in key order: one walk beside each other, and a string only for what
  // differs (a monitor pass over 11,000 rules in sync builds none).
  std::vector<std::string> found;
  if (base == nullptr) return found;
  auto theirs_it = actual.services.begin();
  for (const auto& mine : base->services) {
    const ServiceKey& key = mine.service.key;
    while (theirs_it != actual.services.end() && theirs_it->service.key < key) ++theirs_it;
    if (wanted.count(key) == 0) continue;  // leaving anyway: nothing to restore
    if (theirs_it == actual.services.end() || !(theirs_it->service.key == key)) {
      found.push_back("virtual service " + serviceName(key) +
                      " was deleted behind tandem's back (ipvsadm -D?)");
      continue;
    }
    const ServiceState& theirs = *theirs_it;
    if (!sameService(mine.service, theirs.service)) {
      found.push_back(
          "virtual service " + serviceName(key) +
          " was changed behind tandem's back (ipvsadm -E?): " + serviceFields(theirs.service) +
          ", tandem set " + serviceFields(mine.service));
    }
    auto m = mine.destinations.begin();
    auto t = theirs.destinations.begin();
    while (m != mine.destinations.end() || t != theirs.destinations.end()) {
      if (t == theirs.destinations.end() ||
          (m != mine.destinations.end() && m->dest.key < t->dest.key)) {
        found.push_back("real server " + destName(m->dest.key) + " of " + serviceName(key) +
                        " was removed behind tandem's back (ipvsadm -d?)");
        ++m;
      } else if (m == mine.destinations.end() || t->dest.key < m->dest.key) {
        found.push_back("real server " + destName(t->dest.key) + " was added to " +
                        serviceName(key) + " behind tandem's back (ipvsadm -a?)");
        ++t;
      } else {
        if (!(t->dest == m->dest)) {
          found.push_back("real server " + destName(m->dest.key) + " of " + serviceName(key) +
                          " was changed behind tandem's back (ipvsadm -e?): " +
                          destFields(t->dest) + ", tandem set " + destFields(m->dest));
        }
        ++m;
        ++t;
      }
    }
  }
  return found;
}

void Reconciler::applyTimeouts(const Timeouts& want, TimeoutsDone done) {
  if (want == Timeouts{}) {
    done({});
    return;
  }
  timeouts_running_ = true;
  const uint64_t gen = generation_;
  std::weak_ptr<bool> alive = alive_;
  auto current = [this, alive, gen] { return !alive.expired() && gen == generation_; };
  kernel_.timeouts([this, current, want, done = std::move(done)](Result<Timeouts> have) mutable {
    if (!current()) return;
    if (!have) {
      timeouts_running_ = false;
      done(fail(have.error().code, "cannot read the IPVS timeouts: " + have.error().message));
      return;
    }
    Timeouts delta;
    if (want.tcp != 0 && want.tcp != have->tcp) delta.tcp = want.tcp;
    if (want.tcpfin != 0 && want.tcpfin != have->tcpfin) delta.tcpfin = want.tcpfin;
    if (want.udp != 0 && want.udp != have->udp) delta.udp = want.udp;
    if (delta == Timeouts{}) {
      timeouts_running_ = false;
      done({});
      return;
    }
    kernel_.setTimeouts(delta, [this, current, want, done = std::move(done)](Result<void> r) {
      if (!current()) return;
      timeouts_running_ = false;
      if (!r) {
        done(fail(r.error().code, "cannot set the IPVS timeouts: " + r.error().message));
        return;
      }
      log(LogLevel::kNotice, "IPVS timeouts set: tcp=" + std::to_string(want.tcp) +
                                 "s tcpfin=" + std::to_string(want.tcpfin) +
                                 "s udp=" + std::to_string(want.udp) + "s (0: unchanged)");
      done({});
    });
  });
}

IpvsReconcileLoop::IpvsReconcileLoop(loop::Dispatcher& dispatcher, Kernel& kernel, IpvsLog log,
                                     OwnedStore* owned_store)
    : dispatcher_(dispatcher),
      reconciler_(dispatcher, kernel, log, owned_store),
      log_(std::move(log)) {
  timer_ = dispatcher_.createTimer([this] { pass(Pass::kVerify); });
}

void IpvsReconcileLoop::configure(const config::Config& cfg) {
  // A new interval starts now, from a verified table; a new manage needs the whole table.
  const bool verify = !config_ || config_->ipvs.monitor_interval != cfg.ipvs.monitor_interval ||
                      config_->ipvs.manage != cfg.ipvs.manage;
  config_ = cfg;
  desired_ = desiredTable(*config_, health_);
  pass(verify ? Pass::kVerify : Pass::kChange);
}

void IpvsReconcileLoop::setHealth(const std::string& virtual_server, const Endpoint& real_server,
                                  bool up, std::optional<int> weight) {
  if (health_.get(virtual_server, real_server) == RealHealth{up, weight}) return;
  health_.set(virtual_server, real_server, up, weight);
  // Only that service is rebuilt: with a slow start's ramps, changes come by the thousand.
  if (config_ && updateDesired(desired_, *config_, health_, virtual_server)) pass(Pass::kChange);
}

void IpvsReconcileLoop::setDrained(std::set<std::pair<ServiceKey, DestKey>> drained) {
  health_.setDrained(std::move(drained));
  if (!config_) return;
  Table next = desiredTable(*config_, health_);
  auto same_dests = [](const ServiceState& a, const ServiceState& b) {
    return a.service == b.service &&
           std::equal(a.destinations.begin(), a.destinations.end(), b.destinations.begin(),
                      b.destinations.end(),
                      [](const DestinationState& x, const DestinationState& y) {
                        return x.dest == y.dest;
                      });
  };
  if (std::equal(next.services.begin(), next.services.end(), desired_.services.begin(),
                 desired_.services.end(), same_dests)) {
    return;
  }
  desired_ = std::move(next);
  pass(Pass::kChange);
}

void IpvsReconcileLoop::reconcileNow() {
  if (config_) pass(Pass::kVerify);
}

void IpvsReconcileLoop::stop() {
  timer_->cancel();
  queued_.reset();
  if (running_) {
    reconciler_.cancel();
    running_ = false;
  }
}

void IpvsReconcileLoop::pass(Pass kind) {
  if (!config_) return;
  if (running_) {
    // One pass at a time: the next one starts when this one ends, from the config and health
    // of that moment. A queued verify covers a queued change.
    queued_ = (kind == Pass::kVerify || queued_ == Pass::kVerify) ? Pass::kVerify : Pass::kChange;
    return;
  }
  running_ = true;
  // desired_ follows configure() and setHealth(): a monitor pass does not rebuild 11,000 rules
  // from the config on the loop.
  const Timeouts want = desiredTimeouts(config_->ipvs);
  reconciler_.reconcile(desired_, config_->ipvs.manage == config::IpvsManage::kAll, kind,
                        [this, kind, want](Result<ReconcileReport> r) {
                          std::string error = r ? std::string() : r.error().message;
                          reconciler_.applyTimeouts(want, [this, kind, error](Result<void> t) {
                            std::string all = error;
                            if (!t) all += (all.empty() ? "" : "; ") + t.error().message;
                            passDone(kind, all);
                          });
                        });
}

void IpvsReconcileLoop::passDone(Pass kind, const std::string& error) {
  running_ = false;
  ++passes_;
  if (kind == Pass::kVerify && error.empty()) {
    ++dumps_;
    last_dump_at_ = dispatcher_.now();
  }
  if (error != last_error_) {
    if (!error.empty()) {
      if (log_) log_(LogLevel::kError, "IPVS table not in sync: " + error);
    } else if (log_) {
      log_(LogLevel::kNotice, "IPVS table in sync again");
    }
    last_error_ = error;
  }
  // A kChange pass leaves the interval running: the next dump comes on time however often the
  // desired table changes.
  if (kind == Pass::kVerify || !timer_->armed()) timer_->arm(config_->ipvs.monitor_interval);
  if (queued_) {
    const Pass next = *queued_;
    queued_.reset();
    pass(next);
  }
}

}  // namespace tandem::resources::ipvs
