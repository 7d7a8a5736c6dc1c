#pragma once

#include <string_view>

#include "common/journal_event.h"
#include "common/log.h"

namespace tandem::platform {

using ::tandem::LogLevel;
using ::tandem::logLevelName;
using ::tandem::parseLogLevel;

// Where the daemon's log lines go: qb_log in production (qb_logger.h), a recorder in tests.
// A line describes one event with key=value context, e.g.
// "config reloaded generation=2 cluster=prod nodes=2".
class Logger {
 public:
  virtual ~Logger() = default;
  virtual void log(LogLevel level, std::string_view line) = 0;
  // A record for the journal, with its message ID and fields (journal_event.h), beside the plain
  // line already logged for the same event: where there is no journal, nothing more.
  virtual void event(const JournalEvent& e) { (void)e; }
  // Lines less severe than level are dropped.
  virtual void setLevel(LogLevel level) = 0;
  // The sink every module is handed.
  LogSink sink() {
    return [this](LogLevel level, const std::string& line) { log(level, line); };
  }
};

}  // namespace tandem::platform
