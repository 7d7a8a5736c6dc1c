#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "fakes/sim_dispatcher.h"
#include "health/checker.h"

namespace tandem::fakes {

using resources::health::Checker;
using resources::health::ProbeDone;
using resources::health::ProbeResult;
using resources::health::ProbeTarget;

// Real servers as the fake checker sees them: alive answers after `latency`, dead fails after
// `latency` (refused), hung never answers (the probe times out at the check's timeout).
enum class Server { kAlive, kDead, kHung };

struct CheckWorld {
  explicit CheckWorld(SimDispatcher& s) : sim(s) {}
  SimDispatcher& sim;
  std::map<Endpoint, Server> servers;
  // Directors that reach no real server (a lost backend network): every probe they make fails.
  std::set<std::string> blind;
  // The weight a healthy probe of a server asks for (an exec check's exit_weight).
  std::map<Endpoint, int> asked_weight;
  Millis latency{5};
  size_t probes = 0;
  size_t running = 0;
  size_t most_running = 0;
};

class FakeChecker final : public Checker {
 public:
  explicit FakeChecker(CheckWorld& w, std::string prober = "")
      : w_(w), prober_(std::move(prober)), timer_(w.sim.createTimer([this] { fire(); })) {}
  ~FakeChecker() override { cancel(); }
  void probe(const ProbeTarget& target, ProbeDone done) override {
    ++w_.probes;
    w_.most_running = std::max(w_.most_running, ++w_.running);
    done_ = std::move(done);
    started_ = w_.sim.now();
    address_ = target.address;
    auto it = w_.servers.find(target.address);
    state_ = it == w_.servers.end() || w_.blind.count(prober_) ? Server::kDead : it->second;
    timeout_ = target.check.timeout;
    timer_->arm(state_ == Server::kHung ? timeout_ : w_.latency);
  }
  void cancel() override {
    if (done_) --w_.running;
    done_ = nullptr;
    timer_->cancel();
  }

 private:
  void fire() {
    --w_.running;
    auto done = std::move(done_);
    done_ = nullptr;
    const Millis took = std::chrono::duration_cast<Millis>(w_.sim.now() - started_);
    if (state_ == Server::kAlive) {
      auto w = w_.asked_weight.find(address_);
      done(ProbeResult{true, "connected", took,
                       w == w_.asked_weight.end() ? std::nullopt : std::optional<int>(w->second)});
    } else if (state_ == Server::kDead) {
      done(ProbeResult{false, "connection refused", took});
    } else {
      done(ProbeResult{false, "timed out after " + std::to_string(timeout_.count()) + " ms", took});
    }
  }
  CheckWorld& w_;
  std::string prober_;
  std::unique_ptr<loop::Timer> timer_;
  ProbeDone done_;
  loop::MonoTime started_{};
  Server state_ = Server::kDead;
  Endpoint address_;
  Millis timeout_{0};
};

}  // namespace tandem::fakes
