#include "format_status.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "commands.h"
#include "format_table.h"
#include "ipc/protocol.h"

namespace tandem::cli {

namespace {

using nlohmann::json;

// Health is per-mille; operators read percent.
std::string percentOf(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::string(kUnknown);
  int64_t permille = std::max<int64_t>(0, it->get<int64_t>());
  std::string out = std::to_string(permille / 10);
  if (permille % 10 != 0) out += "." + std::to_string(permille % 10);
  return out + "%";
}

std::string lastHeard(const json& node, const std::string& local_node) {
  auto it = node.find("last_heartbeat_ms");
  if (it != node.end() && it->is_number_integer()) return formatAge(it->get<int64_t>()) + " ago";
  if (it != node.end() && !it->is_null()) return std::string(kUnknown);
  bool self = local_node != kUnknown && textOf(node, "name") == local_node;
  return self ? "(local)" : "never";
}

std::string nodesSection(const json& status, const std::string& local_node) {
  auto nodes = status.find("nodes");
  if (nodes == status.end() || !nodes->is_array() || nodes->empty()) {
    return "(tandemd reported no nodes)\n";
  }
  std::vector<Row> rows{{"Node", "Role", "Priority", "Health", "Standby", "Last heartbeat"}};
  for (const json& n : *nodes) {
    rows.push_back({textOf(n, "name"), textOf(n, "role"), numberOf(n, "priority"),
                    percentOf(n, "health"), yesNo(n, "standby"), lastHeard(n, local_node)});
  }
  return table(rows);
}

// votequorum's answer, and while its last one is held over a lost connection, since when.
std::string quorumOf(const json& status) {
  std::string out = yesNo(status, "quorate");
  auto held = status.find("quorum_held_ms");
  if (held != status.end() && held->is_number_integer()) {
    out += " (held: votequorum lost " + formatAge(held->get<int64_t>()) + " ago)";
  }
  return out;
}

// Only when something was rejected: zero counters are noise.
std::string framesSection(const json& status) {
  auto rejected = status.find("rejected_frames");
  if (rejected == status.end() || !rejected->is_object()) return "";
  std::vector<Row> rows;
  for (const auto& [reason, count] : rejected->items()) {
    if (count.is_number_unsigned() && count.get<uint64_t>() > 0) {
      rows.push_back({"  " + reason, std::to_string(count.get<uint64_t>())});
    }
  }
  if (rows.empty()) return "";
  return "\nRejected frames (" + numberOf(status, "accepted_frames") + " accepted):\n" +
         table(rows);
}

// One line of detail per resource: a VIP's interface; an announcement's source MAC and what
// the neighbour verification found ("198.51.100.1 02:00:5e:00:00:01 0.4ms", "... no answer").
std::string resourceDetail(const json& r) {
  std::string out;
  if (auto it = r.find("interface"); it != r.end() && it->is_string())
    out = "on " + it->get<std::string>();
  if (auto mac = r.find("mac"); mac != r.end()) {
    out = mac->is_string() ? "from " + mac->get<std::string>() : "not announced";
  }
  auto v = r.find("verification");
  if (v == r.end() || !v->is_object()) return out;
  std::string state = textOf(*v, "state");
  if (state == "probing") return out + "; verifying neighbours";
  auto held = r.find("present");
  if (state == "not-run" && held != r.end() && held->is_boolean() && held->get<bool>()) {
    return out + "; announcing (neighbours are probed after the first burst)";
  }
  if (auto err = v->find("error"); err != v->end() && err->is_string()) {
    return out + "; neighbours not verified: " + err->get<std::string>();
  }
  auto neighbors = v->find("neighbors");
  if (state != "done" || neighbors == v->end() || !neighbors->is_array()) return out;
  for (const json& n : *neighbors) {
    out += "; " + textOf(n, "address") + " ";
    auto answered = n.find("answered");
    if (answered == n.end() || !answered->is_boolean() || !answered->get<bool>()) {
      out += "no answer";
      continue;
    }
    out += textOf(n, "mac");
    if (auto rtt = n.find("rtt_us"); rtt != n.end() && rtt->is_number()) {
      int64_t us = rtt->get<int64_t>();
      out += " " + std::to_string(us / 1000) + "." + std::to_string(us % 1000 / 100) + "ms";
    }
  }
  return out;
}

// "manual (TANDEM_FAILBACK; the config file says auto)", "delayed 5m (config file)"; "" when
// the answer has none (an older tandemd).
std::string failbackPolicy(const json& status) {
  auto f = status.find("failback");
  if (f == status.end() || !f->is_object()) return "";
  std::string out = textOf(*f, "policy") + " (" + textOf(*f, "source");
  if (auto file = f->find("config_file");
      textOf(*f, "source") != "config file" && file != f->end() && file->is_object()) {
    out += "; the config file says " + textOf(*file, "policy");
  }
  return out + ")";
}

// What this director holds, in start order. Absent from older daemons' answers: no section.
std::string resourcesSection(const json& status) {
  auto resources = status.find("resources");
  if (resources == status.end() || !resources->is_array() || resources->empty()) return "";
  std::vector<Row> rows{{"Resource", "Held", "Detail"}};
  for (const json& r : *resources) {
    if (!r.is_object()) continue;
    rows.push_back({textOf(r, "name"), yesNo(r, "present"), resourceDetail(r)});
  }
  return "\n" + table(rows);
}

// "via dummy0", "via tandem0 (tandemd's own)" for the device tandemd creates (own_interface),
// or "blackhole" when the routes go through no interface (null).
std::string routeInterface(const json& routes) {
  auto it = routes.find("interface");
  if (it != routes.end() && it->is_string()) {
    auto own = routes.find("own_interface");
    const bool owned = own != routes.end() && own->is_boolean() && own->get<bool>();
    return "via " + it->get<std::string>() + (owned ? " (tandemd's own)" : "");
  }
  if (it != routes.end() && it->is_null()) return "blackhole";
  return "interface " + std::string(kUnknown);
}

// "; error: ..." when the object carries one; "" when not.
std::string errorOf(const json& object) {
  auto it = object.find("error");
  if (it == object.end() || it->is_null()) return "";
  return "; error: " + textOf(object, "error");
}

// Route health injection: how the routes are held, then each routed service's route, held or
// not and why. Absent (or null) when no virtual server has a route: no section.
std::string routesSection(const json& status) {
  auto routes = status.find("routes");
  if (routes == status.end() || !routes->is_object()) return "";
  std::string out = "\nRoutes: " + textOf(*routes, "mode") + ", table " +
                    numberOf(*routes, "table") + ", protocol " + numberOf(*routes, "protocol") +
                    ", " + routeInterface(*routes) + ", metric " + numberOf(*routes, "metric") +
                    errorOf(*routes) + "\n";
  auto services = routes->find("services");
  if (services == routes->end() || !services->is_array()) return out;
  std::vector<Row> rows{
      {"Service", "Route", "Held", "Withdrawals", "Absorbed flaps", "Repairs", "Reason"}};
  for (const json& s : *services) {
    if (!s.is_object()) continue;
    rows.push_back({textOf(s, "service"), textOf(s, "route"), yesNo(s, "held"),
                    numberOf(s, "withdrawals"), numberOf(s, "absorbed_flaps"),
                    numberOf(s, "repairs"), textOf(s, "reason") + errorOf(s)});
  }
  if (rows.size() == 1) return out;
  return out + table(rows);
}

std::string failureJson(const Error& error) { return ipc::errorBody(error).dump(2) + "\n"; }

}  // namespace

int exitCodeFor(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound:
      return kExitInvalid;
    default:
      return kExitFailed;
  }
}

std::string formatAge(int64_t ms) {
  if (ms < 0) ms = 0;
  auto two = [](int64_t v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  if (ms < 1000) return std::to_string(ms) + "ms";
  if (ms < 60'000) return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + "s";
  if (ms < 3'600'000) return std::to_string(ms / 60'000) + "m" + two(ms % 60'000 / 1000) + "s";
  if (ms < 86'400'000) {
    return std::to_string(ms / 3'600'000) + "h" + two(ms % 3'600'000 / 60'000) + "m";
  }
  return std::to_string(ms / 86'400'000) + "d" + two(ms % 86'400'000 / 3'600'000) + "h";
}

std::string formatStatus(const json& status) {
  const std::string local_node = textOf(status, "local_node");
  std::string active = "none (no node holds the VIPs)";
  if (auto it = status.find("active"); it == status.end() || !(it->is_string() || it->is_null())) {
    active = std::string(kUnknown);
  } else if (it->is_string()) {
    active = it->get<std::string>();
  }
  std::vector<Row> head{{"Cluster:", textOf(status, "cluster")},
                        {"Local node:", local_node + " (" + textOf(status, "role") + ")"},
                        {"Active:", active},
                        {"Quorum:", quorumOf(status)},
                        {"Epoch:", numberOf(status, "epoch")}};
  auto left = [&status](const char* key) -> std::string {
    auto it = status.find(key);
    if (it == status.end() || !it->is_number_integer()) return "";
    return "; ends in " + formatAge(it->get<int64_t>());
  };
  if (auto move = status.find("move_target");
      move != status.end() && move->is_string() && !move->get<std::string>().empty()) {
    head.push_back({"Move:", "to " + move->get<std::string>() + " (requested by an operator" +
                                 left("move_left_ms") + ")"});
  }
  if (std::string standby_left = left("standby_left_ms"); !standby_left.empty()) {
    head.push_back({"Standby:", local_node + " (requested by an operator" + standby_left + ")"});
  }
  std::string failback = failbackPolicy(status);
  if (auto wait = status.find("failback_waiting");
      wait != status.end() && wait->is_string() && !wait->get<std::string>().empty()) {
    failback += (failback.empty() ? "" : "; ") + wait->get<std::string>();
  }
  if (!failback.empty()) head.push_back({"Failback:", failback});
  std::string banner;
  if (auto m = status.find("maintenance"); m != status.end() && m->is_boolean() && m->get<bool>()) {
    banner =
        "*** MAINTENANCE MODE: no node starts or stops the services, whatever fails; "
        "`tandem maintenance off` ends it ***\n\n";
  }
  return banner + table(head) + "\n" + nodesSection(status, local_node) + resourcesSection(status) +
         routesSection(status) + framesSection(status);
}

CommandOutput renderAnswer(const Result<json>& answer, bool json_output, const std::string& command,
                           const std::function<std::string(const json&)>& text) {
  const std::string prefix = command + ": ";
  if (!answer) {
    if (json_output) return {failureJson(answer.error()), "", exitCodeFor(answer.error())};
    return {"", prefix + answer.error().message + "\n", exitCodeFor(answer.error())};
  }
  auto outcome = ipc::bodyResult(*answer);
  if (json_output) {
    return {answer->dump(2, ' ', false, json::error_handler_t::replace) + "\n", "",
            outcome ? kExitOk : exitCodeFor(outcome.error())};
  }
  if (!outcome) return {"", prefix + outcome.error().message + "\n", exitCodeFor(outcome.error())};
  return {text(*answer), "", kExitOk};
}

std::string watchFrame(const std::string& text, bool first) {
  std::string out = first ? "\x1b[H\x1b[2J" : "\x1b[H";
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += text.substr(start, end - start) + "\x1b[K\n";
    start = end + 1;
  }
  return out + "\x1b[J";
}

CommandOutput renderStatus(const Result<json>& answer, bool json_output) {
  return renderAnswer(answer, json_output, "tandem status", formatStatus);
}

}  // namespace tandem::cli
