#include "format_sync.h"

#include <vector>

#include "commands.h"
#include "format_table.h"
#include "ipc/protocol.h"

namespace tandem::cli {

namespace {

using nlohmann::json;

std::string groupOf(const json& o) {
  if (!o.contains("group") || !o.contains("port")) return std::string(kUnknown);
  return textOf(o, "group") + ":" + numberOf(o, "port");
}

// How long ago a daemon started, by tandemd's clock (the answer's now_ms): the golden tests
// need no clock, and the two hosts' clocks never disagree.
std::string sinceOf(const json& d, const json& answer) {
  auto since = d.find("since_ms");
  auto now = answer.find("now_ms");
  if (since == d.end() || now == answer.end() || !since->is_number_integer() ||
      !now->is_number_integer()) {
    return std::string(kUnknown);
  }
  return formatAge(now->get<int64_t>() - since->get<int64_t>()) + " ago";
}

// What the backup daemon heard (the "heard" object; absent from an older tandemd).
std::string heardLines(const json& answer) {
  auto h = answer.find("heard");
  if (h == answer.end() || !h->is_object()) return "";
  std::string out = "Backup heard: ";
  const std::string error = h->value("error", "");
  if (!error.empty()) {
    out += "? (" + error + ")\n";
  } else if (!h->value("listening", false) && h->value("messages", 0) == 0) {
    out += "- (no backup daemon runs)\n";
  } else if (h->value("messages", 0) == 0) {
    out += "no sync message yet\n";
  } else {
    out += numberOf(*h, "messages") + " sync messages, " + numberOf(*h, "connections") +
           " connection updates";
    auto last = h->find("last_ms");
    auto now = answer.find("now_ms");
    if (last != h->end() && last->is_number_integer() && now != answer.end() &&
        now->is_number_integer()) {
      out += "; the last " + formatAge(now->get<int64_t>() - last->get<int64_t>()) + " ago from " +
             textOf(*h, "from");
    }
    out += "\n";
  }
  if (h->value("other_sync_id", 0) > 0) {
    out += "  dropped for another sync id: " + numberOf(*h, "other_sync_id") +
           " (the last for sync id " + numberOf(*h, "last_other_sync_id") + ")\n";
  }
  if (h->value("malformed", 0) > 0) {
    out += "  not sync messages: " + numberOf(*h, "malformed") + " (the last " +
           textOf(*h, "last_malformed") + ")\n";
  }
  return out;
}

}  // namespace

std::string formatSync(const json& answer) {
  std::string out;
  auto enabled = answer.find("enabled");
  if (enabled == answer.end() || !enabled->is_boolean()) {
    out += "Connection sync: ?\n";
  } else if (!enabled->get<bool>()) {
    out += "Connection sync: disabled ([sync] enabled = false)\n";
  } else {
    out += "Connection sync: on " + textOf(answer, "interface") + ", sync id " +
           numberOf(answer, "sync_id") + ", group " + groupOf(answer) + "\n";
  }
  std::vector<Row> daemons{{"Daemon", "Wanted", "Running", "Interface", "Sync id", "Group", "TTL",
                            "Max length", "Started"}};
  for (const auto& d : answer.value("daemons", json::array())) {
    const bool running = d.value("running", false);
    daemons.push_back(
        {textOf(d, "state"), yesNo(d, "wanted"), yesNo(d, "running"),
         running ? textOf(d, "interface") : "-", running ? numberOf(d, "sync_id") : "-",
         running ? groupOf(d) : "-", running ? numberOf(d, "ttl") : "-",
         running ? numberOf(d, "max_message_length") : "-", running ? sinceOf(d, answer) : "-"});
  }
  out += "\n" + table(daemons);
  std::vector<Row> nodes{
      {"Node", "Role", "Connections", "Templates", "Backup daemon for", "Last sync heard"}};
  for (const auto& n : answer.value("nodes", json::array())) {
    auto ms = n.find("sync_backup_ms");
    std::string backup = std::string(kUnknown);
    if (ms != n.end() && ms->is_number_integer()) {
      backup = ms->get<int64_t>() > 0 ? formatAge(ms->get<int64_t>()) : "not running";
    }
    // null: none heard; absent: an older tandemd, which does not say
    std::string heard = std::string(kUnknown);
    if (auto h = n.find("sync_heard_ms"); h != n.end()) {
      if (h->is_null()) heard = "never";
      if (h->is_number_integer()) heard = formatAge(h->get<int64_t>()) + " ago";
    }
    nodes.push_back({textOf(n, "name"), textOf(n, "role"), numberOf(n, "connections"),
                     numberOf(n, "templates"), backup, heard});
  }
  out += "\n" + table(nodes, {false, false, true, true, false, false});
  out += "\nThis director's table: " + numberOf(answer, "connections") + " connections, " +
         numberOf(answer, "templates") + " persistence templates\n";
  out += heardLines(answer);
  out += "Restarts behind tandem's back: " + numberOf(answer, "restarts") + "\n";
  if (auto w = answer.find("failback_waiting");
      w != answer.end() && w->is_string() && !w->get<std::string>().empty()) {
    out += "Failback: " + w->get<std::string>() + "\n";
  }
  if (auto e = answer.find("error");
      e != answer.end() && e->is_string() && !e->get<std::string>().empty()) {
    out += "Error: " + e->get<std::string>() + "\n";
  }
  return out;
}

CommandOutput renderSync(const Result<json>& answer, bool json_output) {
  return renderAnswer(answer, json_output, "tandem sync status", formatSync);
}

}  // namespace tandem::cli
