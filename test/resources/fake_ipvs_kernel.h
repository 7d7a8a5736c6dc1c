#pragma once

#include <linux/ip_vs.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "ipvs/ipvs_model.h"

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
class FakeIpvsKernel final : public Kernel {
 public:
  Result<Table> dump() override {
    ++dumps_;
    if (fail_dumps_ > 0) {
      --fail_dumps_;
      return fail(ErrorCode::kIo, "dump failed (injected)");
    }
    return table();
  }

  Result<void> apply(const Op& op) override {
    ++requests_;
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

  Result<Timeouts> timeouts() override { return timeouts_; }
  Result<void> setTimeouts(const Timeouts& t) override {
    if (t.tcp) timeouts_.tcp = t.tcp;
    if (t.tcpfin) timeouts_.tcpfin = t.tcpfin;
    if (t.udp) timeouts_.udp = t.udp;
    ++writes_;
    return {};
  }
  uint64_t writes() const override { return writes_; }

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
        s.destinations.push_back(DestinationState{d->second, 0, 0, 0, {}});
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
  struct Entry {
    Service service;
    std::map<DestKey, Destination> dests;
  };
  std::map<ServiceKey, Entry> services_;
  Timeouts timeouts_{900, 120, 300};  // the kernel's defaults
  std::vector<ErrorCode> inject_;
  std::optional<std::pair<size_t, ErrorCode>> fail_after_;
  std::function<void(FakeIpvsKernel&)> before_apply_;
  int fail_dumps_ = 0;
  uint64_t writes_ = 0;
  size_t requests_ = 0;
  size_t dumps_ = 0;
  std::vector<Op> applied_;
};

}  // namespace tandem::fakes
