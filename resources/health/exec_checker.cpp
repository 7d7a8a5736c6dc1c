#include "health/exec_checker.h"

#include <utility>

namespace tandem::resources::health {

namespace {

// The first line of what the command printed, for the reason; bounded.
std::string firstLine(const std::string& output) {
  std::string line = output.substr(0, output.find('\n'));
  constexpr size_t kMax = 200;
  if (line.size() > kMax) line = line.substr(0, kMax) + "...";
  return line;
}

}  // namespace

ExitVerdict execVerdict(const process::ChildResult& r, bool exit_weight) {
  if (!exit_weight || r.ok()) return ExitVerdict{r.ok(), std::nullopt};
  if (r.timed_out || r.term_signal != 0 || r.exit_code <= 1)
    return ExitVerdict{false, std::nullopt};
  return ExitVerdict{true, r.exit_code - 2};
}

std::vector<std::string> execEnvironment(const ProbeTarget& target) {
  return {"TANDEM_VIRTUAL_SERVER=" + target.virtual_server,
          "TANDEM_RS_ADDRESS=" + target.address.address.toString(),
          "TANDEM_RS_PORT=" + std::to_string(target.address.port),
          "TANDEM_CHECK_TIMEOUT_MS=" + std::to_string(target.check.timeout.count())};
}

ExecChecker::ExecChecker(loop::Dispatcher& dispatcher, process::ChildRunner& children)
    : dispatcher_(dispatcher), children_(children) {
  failed_ = dispatcher_.createTimer([this] {
    ProbeDone done = std::move(done_);
    done_ = nullptr;
    const auto took = std::chrono::duration_cast<Millis>(dispatcher_.now() - started_);
    if (done) done(ProbeResult{false, failure_, took});
  });
}

ExecChecker::~ExecChecker() { cancel(); }

void ExecChecker::probe(const ProbeTarget& target, ProbeDone done) {
  cancel();
  done_ = std::move(done);
  started_ = dispatcher_.now();
  if (!target.check.command) {
    failure_ = "no command configured";
    failed_->arm(Millis(0));
    return;
  }
  process::CommandLine cmd{target.check.command->argv, target.check.command->via_shell};
  auto child = children_.run(
      cmd, execEnvironment(target), target.check.timeout,
      [this, exit_weight = target.check.exit_weight](process::ChildResult r) {
        child_.reset();
        ProbeDone d = std::move(done_);
        done_ = nullptr;
        const auto took = std::chrono::duration_cast<Millis>(dispatcher_.now() - started_);
        std::string reason = r.describe();
        const std::string said = firstLine(r.output);
        if (!said.empty()) reason += ": " + said;
        const ExitVerdict v = execVerdict(r, exit_weight);
        if (v.weight) reason += " (weight " + std::to_string(*v.weight) + ")";
        if (d) d(ProbeResult{v.ok, std::move(reason), took, v.weight});
      });
  if (!child) {
    failure_ = "cannot run the check command: " + child.error().message;
    failed_->arm(Millis(0));
    return;
  }
  child_ = std::move(*child);
}

void ExecChecker::cancel() {
  failed_->cancel();
  done_ = nullptr;
  child_.reset();  // kills the child's process group
}

}  // namespace tandem::resources::health
