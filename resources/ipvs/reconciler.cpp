#include "ipvs/reconciler.h"

#include <linux/ip_vs.h>
#include <netinet/in.h>

#include <algorithm>
#include <map>
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

std::string summary(const std::vector<Op>& ops) {
  size_t n[6] = {};
  for (const Op& op : ops) ++n[static_cast<size_t>(op.kind)];
  return "applied " + std::to_string(ops.size()) + " IPVS changes: services +" +
         std::to_string(n[0]) + " ~" + std::to_string(n[1]) + " -" + std::to_string(n[2]) +
         ", real servers +" + std::to_string(n[3]) + " ~" + std::to_string(n[4]) + " -" +
         std::to_string(n[5]);
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

Reconciler::Reconciler(Kernel& kernel, IpvsLog log, OwnedStore* owned_store)
    : kernel_(kernel), log_(std::move(log)), owned_store_(owned_store) {
  loadOwned();
}

void Reconciler::log(IpvsLogLevel level, const std::string& line) const {
  if (log_) log_(level, line);
}

void Reconciler::loadOwned() {
  if (owned_store_ == nullptr) return;
  auto text = owned_store_->read();
  if (!text) {
    log(IpvsLogLevel::kWarning,
        text.error().message +
            "; the virtual services tandem owned before this start are not known: one dropped "
            "from the config meanwhile stays in the kernel (remove it with ipvsadm -D)");
    return;
  }
  if (!*text) return;  // a first start
  ParsedOwned parsed = parseOwned(**text, owned_store_->path());
  for (const auto& w : parsed.warnings) log(IpvsLogLevel::kWarning, w);
  owned_ = parsed.keys;
  saved_owned_ = parsed.keys;
  if (!owned_.empty()) {
    log(IpvsLogLevel::kInfo,
        "tandem owned " + std::to_string(owned_.size()) +
            " virtual service(s) before this start file=" + owned_store_->path());
  }
}

void Reconciler::saveOwned() {
  if (owned_store_ == nullptr || owned_ == saved_owned_) return;
  auto r = owned_store_->write(formatOwned(owned_));
  if (!r) {
    if (r.error().message != save_error_) {
      save_error_ = r.error().message;
      log(IpvsLogLevel::kWarning,
          save_error_ +
              "; after a restart tandem may not remove a virtual service dropped from "
              "the config meanwhile (trying again after each pass)");
    }
    return;
  }
  save_error_.clear();
  saved_owned_ = owned_;
}

Result<ReconcileReport> Reconciler::reconcile(const Table& desired, bool manage_all, Pass pass) {
  ReconcileReport report;
  std::set<ServiceKey> wanted;
  for (const auto& s : desired.services) wanted.insert(s.service.key);
  std::set<ServiceKey> retired;
  for (const auto& k : owned_) {
    if (wanted.count(k) == 0) retired.insert(k);
  }
  // Until this pass completes, tandem owns both what it had and what it is adding.
  owned_.insert(wanted.begin(), wanted.end());

  // Without a dump, plan against what the last complete pass left in the kernel; a changed
  // manage may own services that table does not show, so it dumps.
  const bool incremental =
      pass == Pass::kChange && last_applied_.has_value() && last_manage_all_ == manage_all;
  // Then last_applied_ follows each acknowledged request (applyOp, in place: no copy of a big
  // table), so it stays what the kernel should hold: the base for drift after a fallback dump,
  // and, when no dump was needed, the desired table itself at the end.
  Table* expect = incremental ? &*last_applied_ : nullptr;

  std::vector<Op> done;
  std::vector<std::string> drift;
  bool drift_checked = false;
  auto log_done = [&] {
    if (done.size() <= kOpsLoggedOneByOne) {
      for (const Op& d : done) log(IpvsLogLevel::kNotice, describe(d));
    } else {
      log(IpvsLogLevel::kNotice, summary(done));
    }
  };
  auto give_up = [&](Result<ReconcileReport> r) {
    // Part of a plan may have gone in: the kernel now holds neither table, and what tandem
    // finds next time is its own doing as much as anyone's.
    last_applied_.reset();
    saveOwned();
    return r;
  };
  for (int attempt = 0;; ++attempt) {
    Table dumped_table;
    const Table* actual = expect;
    if (!(incremental && attempt == 0)) {
      auto dumped = kernel_.dump();
      ++report.dumps;
      if (!dumped) {
        auto err =
            fail(dumped.error().code, "cannot read the IPVS table: " + dumped.error().message);
        if (attempt > 0) return give_up(err);
        saveOwned();
        return err;
      }
      dumped_table = std::move(*dumped);
      actual = &dumped_table;
      if (!drift_checked) {
        drift = findDrift(dumped_table, last_applied_ ? &*last_applied_ : nullptr, wanted);
        drift_checked = true;
      }
    }
    const std::vector<Op> ops = plan(desired, *actual, manage_all, retired);
    bool replan = false;
    for (const Op& op : ops) {
      auto r = kernel_.apply(op);
      if (r) {
        ++report.applied;
        done.push_back(op);
        if (expect != nullptr) applyOp(*expect, op);
        if (op.kind == Op::Kind::kDelService) owned_.erase(op.service.key);
        continue;
      }
      if (retryable(r.error()) && attempt < kMaxReplans) {
        // The table moved under us: what we planned against is stale.
        log(IpvsLogLevel::kInfo, describe(op) + ": " + r.error().message +
                                     "; the table changed meanwhile, reading it again");
        ++report.replans;
        replan = true;
        break;
      }
      log_done();
      for (const auto& d : drift) {
        log(IpvsLogLevel::kWarning, d + "; could not restore it: " + r.error().message);
      }
      return give_up(fail(r.error().code,
                          describe(op) + " failed: " + r.error().message +
                              (retryable(r.error()) ? " (the table kept changing under tandem; "
                                                      "will try again at the next pass)"
                                                    : "")));
    }
    if (!replan) break;
  }
  log_done();
  for (const auto& d : drift) log(IpvsLogLevel::kWarning, d + "; restored");
  report.drift = drift.size();
  for (const auto& k : retired) owned_.erase(k);
  last_manage_all_ = manage_all;
  if (incremental && report.dumps == 0) {
    // last_applied_ followed every request of the plan: it is the desired table already.
    saveOwned();
    return report;
  }
  last_applied_ = desired;
  std::sort(
      last_applied_->services.begin(), last_applied_->services.end(),
      [](const ServiceState& a, const ServiceState& b) { return a.service.key < b.service.key; });
  for (auto& s : last_applied_->services) {
    std::sort(s.destinations.begin(), s.destinations.end(),
              [](const DestinationState& a, const DestinationState& b) {
                return a.dest.key < b.dest.key;
              });
  }
  saveOwned();
  return report;
}

std::vector<std::string> Reconciler::findDrift(const Table& actual, const Table* base,
                                               const std::set<ServiceKey>& wanted) const {
  std::vector<std::string> found;
  if (base == nullptr) return found;
  std::map<ServiceKey, const ServiceState*> have;
  for (const auto& s : actual.services) have.emplace(s.service.key, &s);
  for (const auto& mine : base->services) {
    if (wanted.count(mine.service.key) == 0) continue;  // leaving anyway: nothing to restore
    const std::string svc = serviceName(mine.service.key);
    auto it = have.find(mine.service.key);
    if (it == have.end()) {
      found.push_back("virtual service " + svc + " was deleted behind tandem's back (ipvsadm -D?)");
      continue;
    }
    const ServiceState& theirs = *it->second;
    if (!sameService(mine.service, theirs.service)) {
      found.push_back(
          "virtual service " + svc + " was changed behind tandem's back (ipvsadm -E?): " +
          serviceFields(theirs.service) + ", tandem set " + serviceFields(mine.service));
    }
    std::map<DestKey, const Destination*> dests;
    for (const auto& d : theirs.destinations) dests.emplace(d.dest.key, &d.dest);
    for (const auto& d : mine.destinations) {
      auto dt = dests.find(d.dest.key);
      const std::string rs = "real server " + destName(d.dest.key) + " of " + svc;
      if (dt == dests.end()) {
        found.push_back(rs + " was removed behind tandem's back (ipvsadm -d?)");
        continue;
      }
      if (!(*dt->second == d.dest)) {
        found.push_back(rs + " was changed behind tandem's back (ipvsadm -e?): " +
                        destFields(*dt->second) + ", tandem set " + destFields(d.dest));
      }
      dests.erase(dt);
    }
    for (const auto& [key, d] : dests) {
      found.push_back("real server " + destName(key) + " was added to " + svc +
                      " behind tandem's back (ipvsadm -a?)");
    }
  }
  return found;
}

Result<void> Reconciler::applyTimeouts(const Timeouts& want) {
  if (want == Timeouts{}) return {};
  auto have = kernel_.timeouts();
  if (!have) {
    return fail(have.error().code, "cannot read the IPVS timeouts: " + have.error().message);
  }
  Timeouts delta;
  if (want.tcp != 0 && want.tcp != have->tcp) delta.tcp = want.tcp;
  if (want.tcpfin != 0 && want.tcpfin != have->tcpfin) delta.tcpfin = want.tcpfin;
  if (want.udp != 0 && want.udp != have->udp) delta.udp = want.udp;
  if (delta == Timeouts{}) return {};
  auto r = kernel_.setTimeouts(delta);
  if (!r) return fail(r.error().code, "cannot set the IPVS timeouts: " + r.error().message);
  log(IpvsLogLevel::kNotice, "IPVS timeouts set: tcp=" + std::to_string(want.tcp) +
                                 "s tcpfin=" + std::to_string(want.tcpfin) +
                                 "s udp=" + std::to_string(want.udp) + "s (0: unchanged)");
  return {};
}

IpvsReconcileLoop::IpvsReconcileLoop(loop::Dispatcher& dispatcher, Kernel& kernel, IpvsLog log,
                                     OwnedStore* owned_store)
    : dispatcher_(dispatcher), reconciler_(kernel, log, owned_store), log_(std::move(log)) {
  timer_ = dispatcher_.createTimer([this] { pass(Pass::kVerify); });
}

void IpvsReconcileLoop::configure(const config::Config& cfg) {
  // A new interval starts now, from a verified table; a new manage needs the whole table.
  const bool verify = !config_ || config_->ipvs.monitor_interval != cfg.ipvs.monitor_interval ||
                      config_->ipvs.manage != cfg.ipvs.manage;
  config_ = cfg;
  pass(verify ? Pass::kVerify : Pass::kChange);
}

void IpvsReconcileLoop::setHealth(const std::string& virtual_server, const Endpoint& real_server,
                                  bool up) {
  if (health_.up(virtual_server, real_server) == up) return;
  health_.set(virtual_server, real_server, up);
  if (!config_) return;
  Table next = desiredTable(*config_, health_);
  if (plan(next, desired_, false).empty()) return;  // e.g. a server with no service
  pass(Pass::kChange);
}

void IpvsReconcileLoop::reconcileNow() {
  if (config_) pass(Pass::kVerify);
}

void IpvsReconcileLoop::stop() { timer_->cancel(); }

void IpvsReconcileLoop::pass(Pass kind) {
  if (!config_) return;
  ++passes_;
  desired_ = desiredTable(*config_, health_);
  std::string error;
  auto r = reconciler_.reconcile(desired_, config_->ipvs.manage == config::IpvsManage::kAll, kind);
  if (!r) error = r.error().message;
  auto t = reconciler_.applyTimeouts(desiredTimeouts(config_->ipvs));
  if (!t) error += (error.empty() ? "" : "; ") + t.error().message;
  if (error != last_error_) {
    if (!error.empty()) {
      if (log_) log_(IpvsLogLevel::kError, "IPVS table not in sync: " + error);
    } else if (log_) {
      log_(IpvsLogLevel::kNotice, "IPVS table in sync again");
    }
    last_error_ = error;
  }
  // A kChange pass leaves the interval running: the next dump comes on time however often the
  // desired table changes.
  if (kind == Pass::kVerify || !timer_->armed()) timer_->arm(config_->ipvs.monitor_interval);
}

}  // namespace tandem::resources::ipvs
