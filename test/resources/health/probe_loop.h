#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "health/checker.h"
#include "loop/qb_dispatcher.h"

// The real libqb loop for a checker's tests: probe() runs the loop until the probe's result
// comes, and fails the test (instead of hanging) when none comes within the guard.
namespace tandem::resources::health {

class ProbeLoop {
 public:
  ProbeLoop() {
    auto d = loop::QbDispatcher::create();
    EXPECT_TRUE(d.has_value()) << d.error().message;
    loop_ = std::move(*d);
    guard_ = loop_->createTimer([this] {
      guard_fired_ = true;
      loop_->stop();
    });
  }
  ~ProbeLoop() { guard_.reset(); }

  loop::QbDispatcher& dispatcher() { return *loop_; }

  ProbeResult probe(Checker& checker, const ProbeTarget& target, Millis guard = Millis(10000)) {
    std::optional<ProbeResult> out;
    checker.probe(target, [&](ProbeResult r) {
      out = std::move(r);
      loop_->stop();
    });
    EXPECT_FALSE(out) << "never before probe() returns";
    guard_fired_ = false;
    guard_->arm(guard);
    loop_->run();
    guard_->cancel();
    EXPECT_FALSE(guard_fired_) << "the probe never ended";
    return out.value_or(ProbeResult{false, "no result", Millis(0)});
  }

 private:
  std::unique_ptr<loop::QbDispatcher> loop_;
  std::unique_ptr<loop::Timer> guard_;
  bool guard_fired_ = false;
};

}  // namespace tandem::resources::health
