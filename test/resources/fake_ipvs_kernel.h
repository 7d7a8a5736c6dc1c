#pragma once

#include <linux/ip_vs.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ipvs/ipvs_model.h"
#include "loop/dispatcher.h"
#include "resources/fake_answers.h"

namespace tandem::fakes {

using resources::ipvs::Destination;
using resources::ipvs::DestinationState;
using resources::ipvs::DestKey;
using resources::ipvs::Kernel;
using resources::ipvs::Op;
using resources::ipvs::Service;
using resources::ipvs::ServiceKey;
using resources::ipvs::ServiceState;
using resources::ipvs::Table;
using resources::ipvs::Timeouts;

// The kernel's IPVS table as a map, with the kernel's answers: EEXIST for a service or
// destination that is already there, ENOENT for one that is not (a destination of a missing
// service included), and deleting a service takes its destinations with it. Like the kernel it
// sets IP_VS_SVC_F_HASHED on every service and dumps in an order of its own (here: reverse key
// order), so the planner cannot lean on either. Counts the requests that changed the table.
//
// Built on a dispatcher, it answers like NetlinkKernel: from the loop, after a latency (0 ms by
// default: from the next timer round), in the order of the requests, each request taking effect
// when it is answered. silence() makes it stop answering: each request then completes with the
// kTimeout NetlinkKernel reports once its deadline passes. Built without one, it answers before
// the call returns (for tests that only look at the outcome).
class FakeIpvsKernel final : public Kernel {
 public:
  FakeIpvsKernel() = default;
  explicit FakeIpvsKernel(loop::Dispatcher& dispatcher)
      : answers_(std::make_unique<DueAnswers>(dispatcher)) {}

  void dump(resources::ipvs::KernelDone<Table> done) override {
    ++dumps_;
    later(
        "list the IPVS services",
        [this, done]() mutable {
          if (fail_dumps_ > 0) {
            --fail_dumps_;
            done(fail(ErrorCode::kIo, "dump failed (injected)"));
            return;
          }
          done(table());
        },
        [done](Error e) mutable { done(fail(std::move(e))); });
  }

  void apply(const Op& op, resources::ipvs::KernelDone<void> done) override {
    ++requests_;
    if (corked_ > 0) ++corked_requests_;
    ++in_flight_;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    later(
        "cannot " + op.toString(),
        [this, op, done]() mutable {
          --in_flight_;
          done(answer(op));
        },
        [this, done](Error e) mutable {
          --in_flight_;
          done(fail(std::move(e)));
        });
  }

  void timeouts(resources::ipvs::KernelDone<Timeouts> done) override {
    later(
        "read the IPVS timeouts", [this, done]() mutable { done(timeouts_); },
        [done](Error e) mutable { done(fail(std::move(e))); });
  }
  void setTimeouts(const Timeouts& t, resources::ipvs::KernelDone<void> done) override {
    later(
        "cannot set the IPVS timeouts",
        [this, t, done]() mutable {
          if (t.tcp) timeouts_.tcp = t.tcp;
          if (t.tcpfin) timeouts_.tcpfin = t.tcpfin;
          if (t.udp) timeouts_.udp = t.udp;
          ++writes_;
          done({});
        },
        [done](Error e) mutable { done(fail(std::move(e))); });
  }
  uint64_t writes() const override { return writes_; }
  // Counted, not acted on: the fake answers each request as it would without.
  void cork() override { ++corked_; }
  void uncork() override { --corked_; }
  // How deep the corks are now (0 when every cork() was matched), and the requests made under
  // one.
  int corkDepth() const { return corked_; }
  size_t corkedRequests() const { return corked_requests_; }

  // A request answered at once, whatever the dispatcher: for tests of the planner alone.
  Result<void> applyNow(const Op& op) {
    ++requests_;
    return answer(op);
  }

  // How long each answer takes (on a dispatcher).
  void setLatency(Millis latency) { latency_ = latency; }
  // From now on no request is answered; each fails with kTimeout after the deadline.
  void silence(Millis deadline = Millis(1000)) {
    silent_ = true;
    deadline_ = deadline;
  }
  void speak() { silent_ = false; }
  // Requests answered or not yet answered; the most that were unanswered at once.
  size_t inFlight() const { return in_flight_; }
  size_t maxInFlight() const { return max_in_flight_; }
  Timeouts kernelTimeouts() const { return timeouts_; }

  // What an outside tool (ipvsadm) does: changes the table without counting as tandem's write.
  Result<void> applyDirect(const Op& op) {
    const ServiceKey& key = op.service.key;
    auto it = services_.find(key);
    switch (op.kind) {
      case Op::Kind::kAddService: {
        if (it != services_.end()) return fail(ErrorCode::kAlreadyExists, "service exists");
        Entry e;
        e.service = op.service;
        e.service.flags |= IP_VS_SVC_F_HASHED;
        services_.emplace(key, std::move(e));
        return {};
      }
      case Op::Kind::kEditService:
        if (it == services_.end()) return fail(ErrorCode::kNotFound, "no such service");
        it->second.service = op.service;
        it->second.service.flags |= IP_VS_SVC_F_HASHED;
        return {};
      case Op::Kind::kDelService:
        if (it == services_.end()) return fail(ErrorCode::kNotFound, "no such service");
        services_.erase(it);
        return {};
      default:
        break;
    }
    if (it == services_.end()) return fail(ErrorCode::kNotFound, "no such service");
    if (!op.dest) return fail(ErrorCode::kInvalidArgument, "dest op without a dest");
    auto& dests = it->second.dests;
    auto d = dests.find(op.dest->key);
    switch (op.kind) {
      case Op::Kind::kAddDest:
        if (d != dests.end()) return fail(ErrorCode::kAlreadyExists, "dest exists");
        dests.emplace(op.dest->key, *op.dest);
        return {};
      case Op::Kind::kEditDest:
        if (d == dests.end() || d->second.family != op.dest->family) {
          return fail(ErrorCode::kNotFound, "no such dest");
        }
        d->second = *op.dest;
        return {};
      case Op::Kind::kDelDest:
        if (d == dests.end()) return fail(ErrorCode::kNotFound, "no such dest");
        dests.erase(d);
        return {};
      default:
        return fail(ErrorCode::kInternal, "unreachable");
    }
  }

  // Replaces the whole table (not counted as writes).
  void load(const Table& t) {
    services_.clear();
    for (const auto& s : t.services) {
      Entry e;
      e.service = s.service;
      e.service.flags |= IP_VS_SVC_F_HASHED;
      for (const auto& d : s.destinations) e.dests.emplace(d.dest.key, d.dest);
      services_.emplace(s.service.key, std::move(e));
    }
  }

  // The table in reverse key order, with the kernel's HASHED flag.
  Table table() const {
    Table t;
    for (auto it = services_.rbegin(); it != services_.rend(); ++it) {
      ServiceState s;
      s.service = it->second.service;
      for (auto d = it->second.dests.rbegin(); d != it->second.dests.rend(); ++d) {
        s.destinations.push_back(stateOf(it->first, d->second));
      }
      t.services.push_back(std::move(s));
    }
    return t;
  }

  // The table in key order without kernel bookkeeping: compares with desiredTable() output.
  Table sorted() const {
    Table t;
    for (const auto& [key, e] : services_) {
      ServiceState s;
      s.service = e.service;
      s.service.flags &= ~static_cast<uint32_t>(IP_VS_SVC_F_HASHED);
      for (const auto& [dk, d] : e.dests)
        s.destinations.push_back(DestinationState{d, 0, 0, 0, {}});
      t.services.push_back(std::move(s));
    }
    return t;
  }

  // The next requests fail with these codes, in order, without touching the table.
  void injectErrors(std::vector<ErrorCode> codes) { inject_ = std::move(codes); }
  // The next n requests go through; the one after fails with code.
  void failRequestAfter(size_t n, ErrorCode code) { fail_after_ = std::make_pair(n, code); }
  // Runs once, inside the next apply(), before the request takes effect.
  void beforeNextApply(std::function<void(FakeIpvsKernel&)> hook) {
    before_apply_ = std::move(hook);
  }
  void failDumps(int n) { fail_dumps_ = n; }
  // What the next dumps report of a destination's connections, as the kernel counts them.
  void setConnections(const ServiceKey& s, const DestKey& d, uint32_t active, uint32_t inactive,
                      uint32_t templates) {
    counters_[{s, d}] = Counters{active, inactive, templates};
  }
  void setKernelTimeouts(const Timeouts& t) { timeouts_ = t; }

  const std::vector<Op>& applied() const { return applied_; }
  size_t requests() const { return requests_; }
  size_t dumps() const { return dumps_; }
  bool hasService(const ServiceKey& k) const { return services_.count(k) != 0; }
  std::optional<Destination> dest(const ServiceKey& k, const DestKey& d) const {
    auto it = services_.find(k);
    if (it == services_.end()) return std::nullopt;
    auto dt = it->second.dests.find(d);
    if (dt == it->second.dests.end()) return std::nullopt;
    return dt->second;
  }

 private:
  Result<void> answer(const Op& op) {
    if (before_apply_) {
      auto hook = std::move(before_apply_);
      before_apply_ = nullptr;
      hook(*this);  // e.g. someone runs ipvsadm between tandem's dump and its request
    }
    if (fail_after_ && fail_after_->first-- == 0) {
      ErrorCode code = fail_after_->second;
      fail_after_.reset();
      return fail(code, "injected");
    }
    if (!inject_.empty()) {
      ErrorCode code = inject_.front();
      inject_.erase(inject_.begin());
      return fail(code, "injected");
    }
    auto r = applyDirect(op);
    if (r) {
      ++writes_;
      applied_.push_back(op);
    }
    return r;
  }

  // Runs answer now (no dispatcher) or when due; a silent kernel times out instead. Both
  // callbacks hold their own copy of the caller's completion: they are built as arguments of
  // one call, whose evaluation order C++ leaves open, so neither may move it away.
  void later(std::string what, std::function<void()> answer, std::function<void(Error)> timeout) {
    if (answers_ == nullptr) {
      answer();
      return;
    }
    if (silent_) {
      answers_->after(deadline_, [timeout = std::move(timeout), what = std::move(what),
                                  ms = deadline_.count()] {
        timeout(Error{ErrorCode::kTimeout, "the kernel did not answer within " +
                                               std::to_string(ms) + " ms (" + what + ")"});
      });
    } else {
      answers_->after(latency_, std::move(answer));
    }
  }

 public:
  // Timer rounds in which the fake answered (loop iterations, as far as it can tell).
  size_t rounds() const { return answers_ == nullptr ? 0 : answers_->rounds(); }

 private:
  std::unique_ptr<DueAnswers> answers_;
  Millis latency_{0};
  Millis deadline_{1000};
  bool silent_ = false;
  size_t in_flight_ = 0;
  size_t max_in_flight_ = 0;
  struct Entry {
    Service service;
    std::map<DestKey, Destination> dests;
  };
  struct Counters {
    uint32_t active = 0, inactive = 0, persistent = 0;
  };
  DestinationState stateOf(const ServiceKey& s, const Destination& d) const {
    auto c = counters_.find({s, d.key});
    if (c == counters_.end()) return DestinationState{d, 0, 0, 0, {}};
    return DestinationState{d, c->second.active, c->second.inactive, c->second.persistent, {}};
  }
  std::map<std::pair<ServiceKey, DestKey>, Counters> counters_;
  std::map<ServiceKey, Entry> services_;
  Timeouts timeouts_{900, 120, 300};  // the kernel's defaults
  std::vector<ErrorCode> inject_;
  std::optional<std::pair<size_t, ErrorCode>> fail_after_;
  std::function<void(FakeIpvsKernel&)> before_apply_;
  int fail_dumps_ = 0;
  uint64_t writes_ = 0;
  size_t requests_ = 0;
  size_t dumps_ = 0;
  int corked_ = 0;
  size_t corked_requests_ = 0;
  std::vector<Op> applied_;
};

// Hands the code under test a kernel that forwards to a fake the test keeps looking at (the
// code owns what it opens; the table outlives it, as the kernel's does a daemon).
class KernelView final : public Kernel {
 public:
  explicit KernelView(Kernel& k) : k_(k) {}
  void dump(resources::ipvs::KernelDone<Table> done) override { k_.dump(std::move(done)); }
  void apply(const Op& op, resources::ipvs::KernelDone<void> done) override {
    k_.apply(op, std::move(done));
  }
  void timeouts(resources::ipvs::KernelDone<Timeouts> done) override {
    k_.timeouts(std::move(done));
  }
  void setTimeouts(const Timeouts& t, resources::ipvs::KernelDone<void> done) override {
    k_.setTimeouts(t, std::move(done));
  }
  uint64_t writes() const override { return k_.writes(); }
  void cork() override { k_.cork(); }
  void uncork() override { k_.uncork(); }

 private:
  Kernel& k_;
};

}  // namespace tandem::fakes
