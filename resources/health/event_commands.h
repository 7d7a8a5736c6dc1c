#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/duration.h"
#include "common/log.h"
#include "config/config.h"
#include "process/child_runner.h"

// The notify commands of real-server and virtual-service events. Each subject (a real server, a
// service) has at most one command running: an event that comes while its previous one still
// runs waits, and a newer event replaces a waiting one, since the older is stale by then. The
// children run through the child runner (never waited for on the loop, killed with their process
// group at the timeout). A command's failure is logged; it changes nothing else.
namespace tandem::resources::health {

struct EventCommand {
  config::Command command;
  Millis timeout{10000};
  std::vector<std::string> env;  // "KEY=value"
  std::string what;              // for the log: "event=rs-down vs=web rs=203.0.113.21:80"
};

class EventCommands {
 public:
  EventCommands(process::ChildRunner* children, LogSink log);
  ~EventCommands();
  EventCommands(const EventCommands&) = delete;
  EventCommands& operator=(const EventCommands&) = delete;

  // Runs (or queues) the command for `subject`.
  void run(const std::string& subject, EventCommand cmd);
  // Kills what runs and forgets what waits.
  void clear();

  size_t running() const;
  size_t waiting() const;

 private:
  struct Slot {
    std::unique_ptr<process::ChildHandle> child;
    std::optional<EventCommand> waiting;
  };
  void start(const std::string& subject, EventCommand cmd);
  void finished(const std::string& subject, const std::string& what, process::ChildResult r);

  process::ChildRunner* children_;
  LogSink log_;
  std::map<std::string, Slot> slots_;  // a subject with a command running
};

}  // namespace tandem::resources::health
