#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fakes/sim_dispatcher.h"
#include "process/child_runner.h"

namespace tandem::fakes {

// Children on simulated time: each runs for `runs_for`, then exits with `exit_code`, unless its
// timeout comes first (then it is "killed"). A program listed in `programs` (by argv[0]) does
// as its entry says instead; with `refuse_others`, a program not listed cannot start at all.
// Destroying its handle kills it without a callback. Every start is recorded with its
// environment, and how many ran at once; `ends` says how each ended.
class SimChildren final : public process::ChildRunner {
 public:
  struct Start {
    std::vector<std::string> argv;
    std::vector<std::string> env;
    loop::MonoTime at;
  };
  struct Program {
    Millis runs_for{10};
    int exit_code = 0;
    bool cannot_start = false;  // as a fork that fails
  };
  struct End {
    std::vector<std::string> argv;
    loop::MonoTime at;
    process::ChildResult result;
  };

  explicit SimChildren(SimDispatcher& sim) : sim_(sim) {}

  Result<std::unique_ptr<process::ChildHandle>> run(
      const process::CommandLine& cmd, const std::vector<std::string>& env, Millis timeout,
      std::function<void(process::ChildResult)> done) override {
    Program p{runs_for, exit_code, refuse_others};
    if (auto it = programs.find(cmd.argv.empty() ? "" : cmd.argv[0]); it != programs.end()) {
      p = it->second;
    }
    if (p.cannot_start) return fail(ErrorCode::kUnavailable, "no children here");
    starts.push_back(Start{cmd.argv, env, sim_.now()});
    most_running = std::max(most_running, ++running);
    return std::unique_ptr<process::ChildHandle>(
        std::make_unique<Child>(*this, cmd.argv, p, timeout, std::move(done)));
  }

  // The value of KEY in a start's environment ("" when it has none).
  static std::string env(const Start& s, const std::string& key) {
    for (const auto& kv : s.env) {
      if (kv.rfind(key + "=", 0) == 0) return kv.substr(key.size() + 1);
    }
    return {};
  }

  Millis runs_for{10};
  int exit_code = 0;
  bool refuse_others = false;
  std::map<std::string, Program> programs;
  std::vector<Start> starts;
  std::vector<End> ends;
  size_t running = 0;
  size_t most_running = 0;

 private:
  class Child final : public process::ChildHandle {
   public:
    Child(SimChildren& owner, std::vector<std::string> argv, Program p, Millis timeout,
          std::function<void(process::ChildResult)> done)
        : owner_(owner), done_(std::move(done)) {
      const bool times_out = p.runs_for > timeout;
      timer_ = owner_.sim_.createTimer([this, times_out, p, argv = std::move(argv)] {
        process::ChildResult r;
        r.timed_out = times_out;
        r.exit_code = times_out ? -1 : p.exit_code;
        finished_ = true;
        --owner_.running;
        owner_.ends.push_back(End{argv, owner_.sim_.now(), r});
        auto callback = std::move(done_);
        callback(r);  // may destroy this child: nothing after it
      });
      timer_->arm(times_out ? timeout : p.runs_for);
    }
    ~Child() override {
      if (!finished_) --owner_.running;
    }

   private:
    SimChildren& owner_;
    std::function<void(process::ChildResult)> done_;
    std::unique_ptr<loop::Timer> timer_;
    bool finished_ = false;
  };

  SimDispatcher& sim_;
};

}  // namespace tandem::fakes
