#pragma once

#include "platform/logger.h"

namespace tandem::platform {

// Logger over libqb's qb_log, the logging corosync and pacemaker use: the journal (or syslog
// where libqb has no journal support) always, stderr while it is a terminal or a file a human
// reads. One per process: qb_log is process-global.
class QbLogger final : public Logger {
 public:
  // to_stderr: also log to stderr, unless stderr is already the journal (systemd sets
  // JOURNAL_STREAM), where every line would appear twice.
  explicit QbLogger(bool to_stderr);
  ~QbLogger() override;
  QbLogger(const QbLogger&) = delete;
  QbLogger& operator=(const QbLogger&) = delete;

  void log(LogLevel level, std::string_view line) override;
  // Straight to the journal with sd_journal_sendv (libqb's journal target carries no fields of
  // ours); without a journal, nothing (the plain line went to libqb's targets).
  void event(const JournalEvent& e) override;
  void setLevel(LogLevel level) override;
  // After daemonizing stderr is /dev/null.
  void stopLoggingToStderr();

 private:
  LogLevel level_ = LogLevel::kInfo;
  bool to_stderr_;
};

}  // namespace tandem::platform
