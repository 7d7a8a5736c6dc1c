#include "drain.h"

#include <sstream>

#include "commands.h"
#include "common/duration.h"
#include "format_table.h"

namespace tandem::cli {

namespace {

using nlohmann::json;

std::string str(const json& j, const char* key, const std::string& otherwise = "?") {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : otherwise;
}

std::string countText(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? std::to_string(it->get<uint64_t>()) : "-";
}

std::string plural(uint64_t n, const std::string& one) {
  return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
}

// "203.0.113.11:80 in web (tcp 198.51.100.50:80)"
std::string what(const json& answer) {
  std::string out = str(answer, "server") + " in ";
  const std::string name = str(answer, "name", "");
  return out + (name.empty() ? str(answer, "service") : name + " (" + str(answer, "service") + ")");
}

struct Progress {
  std::string node;  // "" : no ACTIVE reports it
  std::optional<uint64_t> active;
  std::optional<uint64_t> templates;
  bool gone = false;  // not drained any more
  bool done() const { return !node.empty() && active == 0u && templates == 0u; }
};

Progress progressOf(const json& drains, const std::string& service, const std::string& server) {
  Progress p;
  bool listed = false;
  for (const json& d : drains.value("drains", json::array())) {
    listed = listed || (str(d, "service") == service && str(d, "server") == server);
  }
  p.gone = !listed;
  for (const json& n : drains.value("nodes", json::array())) {
    if (str(n, "role") != "ACTIVE") continue;
    for (const json& e : n.value("progress", json::array())) {
      if (str(e, "service") != service || str(e, "server") != server) continue;
      p.node = str(n, "name");
      auto a = e.find("active_conns");
      auto t = e.find("templates");
      if (a != e.end() && a->is_number_unsigned()) p.active = a->get<uint64_t>();
      if (t != e.end() && t->is_number_unsigned()) p.templates = t->get<uint64_t>();
    }
    break;
  }
  return p;
}

std::string left(const Progress& p) {
  if (p.node.empty()) return "no ACTIVE director reports it";
  if (!p.active || !p.templates) {
    return p.node + " (the ACTIVE) has not dumped its table since the weight went to 0";
  }
  return p.node + " (the ACTIVE) still has " + plural(*p.active, "active connection") + " and " +
         plural(*p.templates, "template");
}

CommandOutput failure(const std::string& command, const Error& e, int code, bool as_json,
                      const json& extra = json::object()) {
  CommandOutput o;
  o.exit_code = code;
  if (as_json) {
    json body = ipc::errorBody(e);
    body.update(extra);
    o.out = body.dump(2) + "\n";
  } else {
    o.err = command + ": " + e.message + "\n";
  }
  return o;
}

}  // namespace

CommandOutput runDrain(const DrainCall& call, const DaemonCall& daemon, const MonotonicMs& now,
                       const SleepMs& sleep, bool as_json) {
  const std::string command = std::string("tandem real ") + (call.on ? "drain" : "enable");
  std::optional<Millis> timeout;
  if (call.wait) {
    timeout = parseDuration(call.timeout.value_or(kDefaultDrainTimeout));
    if (!timeout || timeout->count() <= 0) {
      return failure(
          command,
          Error{ErrorCode::kInvalidArgument, "--timeout " + call.timeout.value_or("") +
                                                 " is not a duration (\"90s\", \"10m\", \"1h\")"},
          kExitInvalid, as_json);
    }
  }
  Result<json> answer =
      daemon(ipc::RequestId::kDrain, ipc::drainBody({call.service, call.server, call.on}));
  if (answer) answer = ipc::bodyResult(*answer);
  if (!answer) return failure(command, answer.error(), exitCodeFor(answer.error()), as_json);
  json body = *answer;
  std::string text;
  if (!call.on) {
    text = body.value("changed", false)
               ? "Enabled " + what(body) +
                     " again: its configured weight, or what its checks say, on every director.\n"
               : what(body) + " was not drained.\n";
  } else {
    text = body.value("changed", false)
               ? "Draining " + what(body) +
                     ": weight 0 on every director; its connections finish, no new ones come. "
                     "`tandem real enable` gives it back.\n"
               : what(body) + " was drained already.\n";
  }
  if (!call.wait) {
    CommandOutput o;
    o.out = as_json ? body.dump(2) + "\n" : text;
    return o;
  }
  const std::string service = str(body, "service");
  const std::string server = str(body, "server");
  const int64_t start = now();
  Progress p;
  for (;;) {
    Result<json> drains = daemon(ipc::RequestId::kDrains, json::object());
    if (drains) drains = ipc::bodyResult(*drains);
    if (!drains) {
      return failure(command, drains.error(), kExitFailed, as_json, json{{"drain", body}});
    }
    p = progressOf(*drains, service, server);
    if (p.gone) {
      return failure(command,
                     Error{ErrorCode::kUnavailable,
                           server + " in " + service +
                               " is no longer drained (`tandem real enable` meanwhile?)"},
                     kExitFailed, as_json, json{{"drain", body}});
    }
    if (p.done() || now() - start >= timeout->count()) break;
    sleep(kDrainPollMs);
  }
  const int64_t waited = now() - start;
  json wait{{"done", p.done()},
            {"node", p.node.empty() ? json(nullptr) : json(p.node)},
            {"waited_ms", waited},
            {"active_conns", p.active ? json(*p.active) : json(nullptr)},
            {"templates", p.templates ? json(*p.templates) : json(nullptr)}};
  if (!p.done()) {
    return failure(command,
                   Error{ErrorCode::kTimeout,
                         "the drain of " + server + " in " + service + " did not finish within " +
                             formatDuration(*timeout) + ": " + left(p) + "; it stays drained"},
                   kExitFailed, as_json, json{{"drain", body}, {"wait", wait}});
  }
  CommandOutput o;
  if (as_json) {
    body["wait"] = wait;
    o.out = body.dump(2) + "\n";
  } else {
    o.out = text + "Drained: no active connection and no template left on " + p.node +
            " (the ACTIVE) after " + formatAge(waited) + ".\n";
  }
  return o;
}

CommandOutput renderDrains(const Result<json>& answer, bool as_json) {
  return renderAnswer(answer, as_json, "tandem real list", [](const json& body) {
    const json drains = body.value("drains", json::array());
    if (drains.empty()) return std::string("No real server is drained.\n");
    std::ostringstream out;
    out << plural(drains.size(), "real server") << " drained cluster wide:\n";
    for (const json& d : drains) {
      out << "  " << str(d, "server") << " in " << str(d, "name", str(d, "service")) << " ("
          << str(d, "service") << ")"
          << (d.value("configured", true) ? "" : ", no longer in the config") << "\n";
    }
    out << "\nWhat is left on each (active connections / templates; - : no dump at weight 0 "
           "yet):\n";
    for (const json& n : body.value("nodes", json::array())) {
      out << "  " << str(n, "name") << " (" << str(n, "role") << ")";
      for (const json& e : n.value("progress", json::array())) {
        out << "  " << str(e, "server") << " " << countText(e, "active_conns") << "/"
            << countText(e, "templates");
      }
      out << "\n";
    }
    return out.str();
  });
}

}  // namespace tandem::cli
