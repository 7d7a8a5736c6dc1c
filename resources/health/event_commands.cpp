#include "health/event_commands.h"

#include <utility>

namespace tandem::resources::health {

EventCommands::EventCommands(process::ChildRunner* children, LogSink log)
    : children_(children), log_(std::move(log)) {}

EventCommands::~EventCommands() { clear(); }

void EventCommands::run(const std::string& subject, EventCommand cmd) {
  if (!children_) return;
  auto it = slots_.find(subject);
  if (it != slots_.end()) {
    if (it->second.waiting && log_) {
      log_(LogLevel::kInfo,
           "notify command skipped, a newer event replaces it " + it->second.waiting->what);
    }
    it->second.waiting = std::move(cmd);
    return;
  }
  start(subject, std::move(cmd));
}

void EventCommands::start(const std::string& subject, EventCommand cmd) {
  process::CommandLine line{cmd.command.argv, cmd.command.via_shell};
  const std::string what = cmd.what;
  auto child = children_->run(
      line, cmd.env, cmd.timeout,
      [this, subject, what](process::ChildResult r) { finished(subject, what, std::move(r)); });
  if (!child) {
    if (log_) {
      log_(LogLevel::kError, "cannot run the notify command " + what + ": " +
                                 child.error().message + "; check virtual_server.notify");
    }
    return;
  }
  slots_[subject].child = std::move(*child);
}

void EventCommands::finished(const std::string& subject, const std::string& what,
                             process::ChildResult r) {
  if (!r.ok() && log_) {
    std::string line = "notify command failed " + what + " result=\"" + r.describe() + "\"";
    std::string said = r.output.substr(0, r.output.find('\n'));
    if (said.size() > 200) said = said.substr(0, 200) + "...";
    if (!said.empty()) line += " output=\"" + said + "\"";
    log_(LogLevel::kWarning, line);
  }
  auto it = slots_.find(subject);
  if (it == slots_.end()) return;
  std::optional<EventCommand> next = std::move(it->second.waiting);
  slots_.erase(it);  // the child runner allows its handle to go from inside the callback
  if (next) start(subject, std::move(*next));
}

void EventCommands::clear() { slots_.clear(); }

size_t EventCommands::running() const { return slots_.size(); }

size_t EventCommands::waiting() const {
  size_t n = 0;
  for (const auto& [subject, slot] : slots_) n += slot.waiting ? 1 : 0;
  return n;
}

}  // namespace tandem::resources::health
