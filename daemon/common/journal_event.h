#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/log.h"

// A log line that is also a record in the journal's own terms: a message ID (the catalog
// entry that explains it, packaging/systemd/tandem.catalog) and fields an operator can match
// on (`journalctl TANDEM_EVENT=takeover`). Where there is no journal it is the line alone.
namespace tandem {

// The events, each with its message ID.
enum class JournalKind { kStart, kRole, kTakeover, kRealServer, kAdmin };

// "start", "role", "takeover", "real-server", "admin": TANDEM_EVENT's value.
std::string_view journalKindName(JournalKind kind);
// The 128-bit message ID as 32 hex digits, as MESSAGE_ID= takes it.
std::string_view journalMessageId(JournalKind kind);

struct JournalEvent {
  JournalKind kind = JournalKind::kStart;
  LogLevel level = LogLevel::kNotice;
  std::string line;  // MESSAGE=, as the plain log line would read
  // TANDEM_EVENT= and MESSAGE_ID= are added from kind; these are the rest, "TANDEM_NODE" ->
  // "lb1". A name may repeat (one TANDEM_VIP= per VIP).
  std::vector<std::pair<std::string, std::string>> fields;
};

}  // namespace tandem
