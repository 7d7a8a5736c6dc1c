#include "common/journal_event.h"

namespace tandem {

std::string_view journalKindName(JournalKind kind) {
  switch (kind) {
    case JournalKind::kStart:
      return "start";
    case JournalKind::kRole:
      return "role";
    case JournalKind::kTakeover:
      return "takeover";
    case JournalKind::kRealServer:
      return "real-server";
    case JournalKind::kAdmin:
      return "admin";
  }
  return "unknown";
}

// Made once with `systemd-id128 new`; the catalog (packaging/systemd/tandem.catalog) explains
// each. Never change one: a catalog entry and every saved query are keyed by it.
std::string_view journalMessageId(JournalKind kind) {
  switch (kind) {
    case JournalKind::kStart:
      return "d2de430b1a2644c3b176600afc96e79c";
    case JournalKind::kRole:
      return "63e56d633e414687b2a73e388962a9bc";
    case JournalKind::kTakeover:
      return "d83b687b6e8f4412afde74b6211f69c2";
    case JournalKind::kRealServer:
      return "2fb4840b2e614a0d9063ef7ff77af11f";
    case JournalKind::kAdmin:
      return "aae70eab65044b8db140d75605e3b714";
  }
  return "";
}

}  // namespace tandem
