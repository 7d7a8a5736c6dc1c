#pragma once

#include <optional>
#include <string_view>

namespace tandem::platform {

// The levels of [daemon] log_level, most severe first.
enum class LogLevel { kError, kWarning, kNotice, kInfo, kDebug };

std::optional<LogLevel> parseLogLevel(std::string_view name);
std::string_view logLevelName(LogLevel level);

// Where the daemon's log lines go: qb_log in production (qb_logger.h), a recorder in tests.
// A line describes one event with key=value context, e.g.
// "config reloaded generation=2 cluster=prod nodes=2".
class Logger {
 public:
  virtual ~Logger() = default;
  virtual void log(LogLevel level, std::string_view line) = 0;
  // Lines less severe than level are dropped.
  virtual void setLevel(LogLevel level) = 0;
};

}  // namespace tandem::platform
