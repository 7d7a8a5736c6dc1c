#include "core/event_commands.h"

#include <algorithm>
#include <utility>

namespace tandem::resources {

EventCommands::EventCommands(process::ChildRunner* children, LogSink log,
                             EventCommandsOptions options)
    : children_(children), log_(std::move(log)), options_(std::move(options)) {
  options_.max_waiting = std::max<size_t>(options_.max_waiting, 1);
}

EventCommands::~EventCommands() { clear(); }

void EventCommands::run(const std::string& subject, EventCommand cmd) {
  if (!children_) return;
  auto it = slots_.find(subject);
  if (it == slots_.end()) {
    start(subject, std::move(cmd));
    return;
  }
  std::deque<EventCommand>& waiting = it->second.waiting;
  if (waiting.size() >= options_.max_waiting) {
    ++dropped_;
    if (log_ && options_.max_waiting == 1) {
      log_(LogLevel::kInfo,
           "notify command skipped, a newer event replaces it " + waiting.front().what);
    } else if (log_) {
      log_(LogLevel::kWarning, "notify command dropped, " + std::to_string(waiting.size()) +
                                   " newer events wait behind a command still running " +
                                   waiting.front().what);
    }
    waiting.pop_front();
  }
  waiting.push_back(std::move(cmd));
}

void EventCommands::start(const std::string& subject, EventCommand cmd) {
  for (;;) {
    process::CommandLine line{cmd.command.argv, cmd.command.via_shell};
    const std::string what = cmd.what;
    const Millis timeout = cmd.timeout;
    auto child = children_->run(line, cmd.env, timeout,
                                [this, subject, what, timeout](process::ChildResult r) {
                                  finished(subject, what, timeout, std::move(r));
                                });
    if (child) {
      slots_[subject].child = std::move(*child);
      return;
    }
    if (log_) {
      log_(LogLevel::kError, "cannot run the notify command " + what + ": " +
                                 child.error().message + "; check " + options_.config_key);
    }
    // The next waiting one may start where this one could not.
    auto it = slots_.find(subject);
    if (it == slots_.end()) return;
    if (it->second.waiting.empty()) {
      slots_.erase(it);
      return;
    }
    cmd = std::move(it->second.waiting.front());
    it->second.waiting.pop_front();
  }
}

void EventCommands::finished(const std::string& subject, const std::string& what, Millis timeout,
                             process::ChildResult r) {
  if (!r.ok() && log_) {
    std::string line = "notify command failed " + what + " result=\"" + r.describe() + "\"";
    if (r.timed_out) line += " timeout=" + formatDuration(timeout) + " (killed with its group)";
    std::string said = r.output.substr(0, r.output.find('\n'));
    if (said.size() > 200) said = said.substr(0, 200) + "...";
    if (!said.empty()) line += " output=\"" + said + "\"";
    log_(LogLevel::kWarning, line);
  }
  auto it = slots_.find(subject);
  if (it == slots_.end()) return;
  // The child runner allows its handle to go from inside the callback.
  it->second.child.reset();
  if (it->second.waiting.empty()) {
    slots_.erase(it);
    return;
  }
  EventCommand next = std::move(it->second.waiting.front());
  it->second.waiting.pop_front();
  start(subject, std::move(next));
}

void EventCommands::clear() { slots_.clear(); }

size_t EventCommands::running() const { return slots_.size(); }

size_t EventCommands::waiting() const {
  size_t n = 0;
  for (const auto& [subject, slot] : slots_) n += slot.waiting.size();
  return n;
}

}  // namespace tandem::resources
