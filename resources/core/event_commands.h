#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/duration.h"
#include "common/log.h"
#include "config/config.h"
#include "process/child_runner.h"

// The commands run on events: a real server's or a service's health (virtual_server.notify), a
// role or VIP change ([notify]). Each subject (a real server, a service, the director) has at
// most one command running; an event that comes while its previous one still runs waits in the
// subject's queue, and starts when the one before it ended. A full queue drops its oldest
// waiting event (logged), so a command that always hangs cannot grow memory. Health events keep
// one waiting (the newest: an older one is stale by then); [notify] keeps 64, since every role
// and VIP change matters in its order. The children run through the child runner (never waited
// for on the loop, killed with their process group at the timeout). A command's failure is
// logged; it changes nothing else.
namespace tandem::resources {

struct EventCommand {
  config::Command command;
  Millis timeout{10000};
  std::vector<std::string> env;  // "KEY=value"
  std::string what;              // for the log: "event=rs-down vs=web rs=203.0.113.21:80"
};

struct EventCommandsOptions {
  // Events that may wait per subject; past it the oldest waiting one is dropped. At least 1.
  size_t max_waiting = 1;
  // The config key that names the commands, for the log: "virtual_server.notify".
  std::string config_key;
};

class EventCommands {
 public:
  EventCommands(process::ChildRunner* children, LogSink log, EventCommandsOptions options);
  ~EventCommands();
  EventCommands(const EventCommands&) = delete;
  EventCommands& operator=(const EventCommands&) = delete;

  // Runs (or queues) the command for `subject`.
  void run(const std::string& subject, EventCommand cmd);
  // Kills what runs and forgets what waits.
  void clear();

  size_t running() const;
  size_t waiting() const;
  // Events dropped from a full queue since the start.
  uint64_t dropped() const { return dropped_; }

 private:
  struct Slot {
    std::unique_ptr<process::ChildHandle> child;
    std::deque<EventCommand> waiting;
  };
  // Starts cmd, or the next waiting one that can start when it cannot.
  void start(const std::string& subject, EventCommand cmd);
  void finished(const std::string& subject, const std::string& what, Millis timeout,
                process::ChildResult r);

  process::ChildRunner* children_;
  LogSink log_;
  EventCommandsOptions options_;
  std::map<std::string, Slot> slots_;  // a subject with a command running
  uint64_t dropped_ = 0;
};

}  // namespace tandem::resources
