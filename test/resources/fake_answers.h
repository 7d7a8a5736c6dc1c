#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "common/duration.h"
#include "loop/dispatcher.h"

namespace tandem::fakes {

// When a fake kernel on a dispatcher answers: each answer runs from a timer of the loop once its
// delay has passed, answers due at once in the order they were queued, and answers queued while
// they run wait for the next round, as replies to a new request come in a new loop iteration.
// Shared by FakeIpvsKernel and FakeSyncKernel.
class DueAnswers {
 public:
  explicit DueAnswers(loop::Dispatcher& dispatcher)
      : dispatcher_(dispatcher), timer_(dispatcher.createTimer([this] { answerDue(); })) {}

  void after(Millis delay, std::function<void()> answer) {
    due_.push_back(Due{dispatcher_.now() + delay, next_seq_++, std::move(answer)});
    arm();
  }
  // Timer rounds in which answers ran (loop iterations, as far as a fake can tell).
  size_t rounds() const { return rounds_; }

 private:
  struct Due {
    loop::MonoTime at;
    uint64_t seq = 0;
    std::function<void()> run;
  };

  void arm() {
    if (due_.empty()) return;
    loop::MonoTime first = due_.front().at;
    for (const auto& d : due_) first = std::min(first, d.at);
    timer_->arm(std::chrono::duration_cast<Millis>(first - dispatcher_.now()));
  }

  void answerDue() {
    const loop::MonoTime now = dispatcher_.now();
    std::vector<Due> ready;
    std::vector<Due> keep;
    for (auto& d : due_) (d.at <= now ? ready : keep).push_back(std::move(d));
    due_ = std::move(keep);
    std::sort(ready.begin(), ready.end(), [](const Due& a, const Due& b) { return a.seq < b.seq; });
    ++rounds_;
    for (auto& d : ready) d.run();
    arm();
  }

  loop::Dispatcher& dispatcher_;
  std::unique_ptr<loop::Timer> timer_;
  std::vector<Due> due_;
  uint64_t next_seq_ = 0;
  size_t rounds_ = 0;
};

}  // namespace tandem::fakes
