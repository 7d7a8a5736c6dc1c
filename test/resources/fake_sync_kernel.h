#pragma once

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

using resources::ipvs::SyncDaemon;
using resources::ipvs::SyncKernel;
using resources::ipvs::SyncState;

// The kernel's sync daemons: at most one per state, with the kernel's answers (a start of a
// state that runs is kAlreadyExists whatever its settings, a stop of one that does not is
// kNotFound). Like the 6.1 kernel it reports a started daemon with its defaults filled in
// (withKernelDefaults(): group 224.0.0.81, port 8848, ttl 1, maxlen 1472 for an IPv4 group and
// 1452 for an IPv6 one, as on a 1500-byte link), so a caller that compares what it asked for
// with what runs must expect them; setDaemons() puts in exactly what it is given.
//
// Like FakeIpvsKernel: built on a dispatcher it answers from the loop after a latency (0 ms: the
// next timer round), in request order, each request taking effect when it is answered; silent()
// makes it answer nothing at all (the caller's own deadline is what ends the wait). Built
// without one, it answers before the call returns.
class FakeSyncKernel final : public SyncKernel {
 public:
  FakeSyncKernel() = default;
  explicit FakeSyncKernel(loop::Dispatcher& dispatcher)
      : answers_(std::make_unique<DueAnswers>(dispatcher)) {}

  void daemons(resources::ipvs::KernelDone<std::vector<SyncDaemon>> done) override {
    ++lists_;
    later([this, done = std::move(done)]() {
      if (auto e = injected()) {
        done(fail(std::move(*e)));
        return;
      }
      done(daemonsNow());
    });
  }

  void startDaemon(const SyncDaemon& d, resources::ipvs::KernelDone<void> done) override {
    ++starts_;
    later([this, d, done = std::move(done)]() {
      if (auto e = injected()) {
        done(fail(std::move(*e)));
        return;
      }
      if (refuse_starts_ > 0) {
        --refuse_starts_;
        done(fail(ErrorCode::kNotFound, "cannot start the IPVS sync " +
                                            resources::ipvs::syncStateName(d.state) +
                                            " daemon on " + d.interface + ": No such device"));
        return;
      }
      const std::string what = "cannot start the IPVS sync " +
                               resources::ipvs::syncStateName(d.state) + " daemon on " +
                               d.interface + " (sync id " + std::to_string(d.sync_id) + ")";
      if (running_.count(d.state) != 0) {
        done(fail(ErrorCode::kAlreadyExists, what + ": File exists: a sync " +
                                                 resources::ipvs::syncStateName(d.state) +
                                                 " daemon already runs"));
        return;
      }
      running_[d.state] = withKernelDefaults(d);
      done({});
    });
  }

  void stopDaemon(SyncState state, resources::ipvs::KernelDone<void> done) override {
    ++stops_;
    later([this, state, done = std::move(done)]() {
      if (auto e = injected()) {
        done(fail(std::move(*e)));
        return;
      }
      if (running_.erase(state) == 0) {
        done(fail(ErrorCode::kNotFound,
                  "cannot stop the IPVS sync " + resources::ipvs::syncStateName(state) +
                      " daemon: No such process: no sync " + resources::ipvs::syncStateName(state) +
                      " daemon runs"));
        return;
      }
      done({});
    });
  }

  // ---- test hooks: what happens behind tandem's back, and what the test looks at ----

  // What the 6.1 kernel reports for a daemon started as d (measured in test/vm/tests/
  // sync_daemons on a veth with a 1500-byte MTU).
  static SyncDaemon withKernelDefaults(SyncDaemon d) {
    if (d.group.isUnspecified()) d.group = *IpAddress::parse("224.0.0.81");
    if (d.port == 0) d.port = 8848;
    if (d.ttl == 0) d.ttl = 1;
    // Unset, or more than the link carries: what a 1500-byte MTU leaves.
    const uint16_t most = d.group.family == Family::kInet ? 1472 : 1452;
    if (d.max_len == 0 || d.max_len > most) d.max_len = most;
    return d;
  }

  // Replaces the running daemons (the last one of a state wins), as if another tool started
  // them; not counted as starts.
  void setDaemons(const std::vector<SyncDaemon>& ds) {
    running_.clear();
    for (const auto& d : ds) running_[d.state] = d;
  }
  // As if `ipvsadm --stop-daemon` ran: the daemon of that state is gone.
  void killDaemon(SyncState state) { running_.erase(state); }
  // The daemons now, master first, as the kernel dumps them.
  std::vector<SyncDaemon> daemonsNow() const {
    std::vector<SyncDaemon> out;
    for (const auto& [state, d] : running_) out.push_back(d);
    return out;
  }
  std::optional<SyncDaemon> daemon(SyncState state) const {
    auto it = running_.find(state);
    if (it == running_.end()) return std::nullopt;
    return it->second;
  }
  // The next request (of any kind) fails with e when it is answered, changing nothing.
  void failNext(Error e) { fail_next_.push_back(std::move(e)); }
  // The next n starts fail as for an interface that does not exist (ENODEV).
  void refuseStarts(int n) { refuse_starts_ = n; }
  // While on, requests are never answered (their completions are kept, not called); turning it
  // off does not answer them either: the kernel dropped them.
  void silent(bool on) { silent_ = on; }
  void setLatency(Millis latency) { latency_ = latency; }

  // Requests made (answered or not).
  size_t starts() const { return starts_; }
  size_t stops() const { return stops_; }
  size_t lists() const { return lists_; }
  // Requests made while silent, never answered.
  size_t unanswered() const { return dropped_.size(); }

 private:
  std::optional<Error> injected() {
    if (fail_next_.empty()) return std::nullopt;
    Error e = std::move(fail_next_.front());
    fail_next_.erase(fail_next_.begin());
    return e;
  }

  void later(std::function<void()> answer) {
    if (silent_) {
      dropped_.push_back(std::move(answer));
    } else if (answers_ == nullptr) {
      answer();
    } else {
      answers_->after(latency_, std::move(answer));
    }
  }

  std::unique_ptr<DueAnswers> answers_;
  std::vector<std::function<void()>> dropped_;
  Millis latency_{0};
  bool silent_ = false;
  std::map<SyncState, SyncDaemon> running_;  // kMaster sorts first, as the kernel dumps
  std::vector<Error> fail_next_;
  int refuse_starts_ = 0;
  size_t starts_ = 0;
  size_t stops_ = 0;
  size_t lists_ = 0;
};

// Hands the code under test a SyncKernel that forwards to a fake the test keeps looking at (the
// code owns what it opens; the daemons outlive it, as the kernel's do tandemd).
class SyncKernelView final : public SyncKernel {
 public:
  explicit SyncKernelView(SyncKernel& k) : k_(k) {}
  void daemons(resources::ipvs::KernelDone<std::vector<SyncDaemon>> done) override {
    k_.daemons(std::move(done));
  }
  void startDaemon(const SyncDaemon& d, resources::ipvs::KernelDone<void> done) override {
    k_.startDaemon(d, std::move(done));
  }
  void stopDaemon(SyncState state, resources::ipvs::KernelDone<void> done) override {
    k_.stopDaemon(state, std::move(done));
  }

 private:
  SyncKernel& k_;
};

}  // namespace tandem::fakes
