#include "platform/qb_logger.h"

#include <qb/qblog.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace tandem::platform {

namespace {

int syslogPriority(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return LOG_ERR;
    case LogLevel::kWarning:
      return LOG_WARNING;
    case LogLevel::kNotice:
      return LOG_NOTICE;
    case LogLevel::kInfo:
      return LOG_INFO;
    case LogLevel::kDebug:
      return LOG_DEBUG;
  }
  return LOG_INFO;
}

// systemd sets JOURNAL_STREAM to "dev:ino" of the stream it connected to stdout and stderr.
bool stderrIsTheJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  uintmax_t dev = 0;
  uintmax_t ino = 0;
  if (std::sscanf(stream, "%" SCNuMAX ":%" SCNuMAX, &dev, &ino) != 2) return false;
  return dev == st.st_dev && ino == st.st_ino;
}

void setFilter(int32_t target, LogLevel level) {
  (void)qb_log_filter_ctl(target, QB_LOG_FILTER_CLEAR_ALL, QB_LOG_FILTER_FILE, "*", 0);
  (void)qb_log_filter_ctl(target, QB_LOG_FILTER_ADD, QB_LOG_FILTER_FILE, "*",
                          static_cast<uint8_t>(syslogPriority(level)));
}

}  // namespace

QbLogger::QbLogger(bool to_stderr) : to_stderr_(to_stderr && !stderrIsTheJournal()) {
  qb_log_init("tandemd", LOG_DAEMON, LOG_INFO);
  // Structured fields (priority, pid, unit) instead of a syslog line; libqb built without
  // journal support says EOPNOTSUPP and keeps syslog, which journald reads as well.
  (void)qb_log_ctl(QB_LOG_SYSLOG, QB_LOG_CONF_USE_JOURNAL, 1);
  (void)qb_log_ctl(QB_LOG_SYSLOG, QB_LOG_CONF_ENABLED, QB_TRUE);
  qb_log_format_set(QB_LOG_STDERR, "%T %N[%P] %p: %b");
  (void)qb_log_ctl(QB_LOG_STDERR, QB_LOG_CONF_ENABLED, to_stderr_ ? QB_TRUE : QB_FALSE);
  setLevel(level_);
}

QbLogger::~QbLogger() { qb_log_fini(); }

void QbLogger::log(LogLevel level, std::string_view line) {
  std::string text(line);
  switch (level) {
    // One call site per priority: qb_log keeps its filter state per call site.
    case LogLevel::kError:
      qb_log(LOG_ERR, "%s", text.c_str());
      break;
    case LogLevel::kWarning:
      qb_log(LOG_WARNING, "%s", text.c_str());
      break;
    case LogLevel::kNotice:
      qb_log(LOG_NOTICE, "%s", text.c_str());
      break;
    case LogLevel::kInfo:
      qb_log(LOG_INFO, "%s", text.c_str());
      break;
    case LogLevel::kDebug:
      qb_log(LOG_DEBUG, "%s", text.c_str());
      break;
  }
}

void QbLogger::event(const JournalEvent& e) {
  if (static_cast<int>(e.level) > static_cast<int>(level_)) return;
  std::vector<std::string> fields;
  fields.reserve(e.fields.size() + 6);
  fields.push_back("MESSAGE=" + e.line);
  fields.push_back("PRIORITY=" + std::to_string(syslogPriority(e.level)));
  fields.push_back("SYSLOG_IDENTIFIER=tandemd");
  fields.push_back("MESSAGE_ID=" + std::string(journalMessageId(e.kind)));
  fields.push_back("TANDEM_EVENT=" + std::string(journalKindName(e.kind)));
  for (const auto& [name, value] : e.fields) fields.push_back(name + "=" + value);
  std::vector<iovec> iov;
  iov.reserve(fields.size());
  for (std::string& f : fields) iov.push_back({f.data(), f.size()});
  // Without a journal (a namespace lab, a container) it fails: nothing is lost, since the plain
  // line of the same event went to libqb's targets.
  (void)::sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
}

void QbLogger::setLevel(LogLevel level) {
  level_ = level;
  setFilter(QB_LOG_SYSLOG, level);
  setFilter(QB_LOG_STDERR, level);
}

void QbLogger::stopLoggingToStderr() {
  to_stderr_ = false;
  (void)qb_log_ctl(QB_LOG_STDERR, QB_LOG_CONF_ENABLED, QB_FALSE);
}

}  // namespace tandem::platform
