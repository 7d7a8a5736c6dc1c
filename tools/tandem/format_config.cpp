#include "format_config.h"

#include <string>

#include "commands.h"
#include "format_table.h"

namespace tandem::cli {

namespace {

using nlohmann::json;

std::string changesText(const json& body) {
  std::string out;
  auto changes = body.find("changes");
  if (changes == body.end() || !changes->is_array()) return out;
  for (const json& c : *changes) {
    if (!c.is_object()) continue;
    out += "  " + textOf(c, "section") + ":\n";
    auto details = c.find("details");
    if (details == c.end() || !details->is_array()) continue;
    for (const json& d : *details) {
      if (d.is_string()) out += "    " + d.get<std::string>() + "\n";
    }
  }
  return out;
}

std::string refusedText(const json& body) {
  std::string out;
  auto refused = body.find("refused");
  if (refused == body.end() || !refused->is_array()) return out;
  for (const json& r : *refused) {
    if (r.is_object()) out += "  " + textOf(r, "message") + "\n";
  }
  return out;
}

bool accepted(const json& body) {
  auto a = body.find("accepted");
  return a != body.end() && a->is_boolean() && a->get<bool>();
}

// A refusal is the file's fault: exit kExitInvalid, the reasons on stderr.
CommandOutput refusedOutput(CommandOutput out, const json& body, const std::string& what) {
  if (out.exit_code != kExitOk || accepted(body)) return out;
  out.exit_code = kExitInvalid;
  if (out.out.empty() || out.out.front() == '{') return out;  // --json: the document says it
  out.err = what + "\n" + refusedText(body);
  out.out.clear();
  return out;
}

}  // namespace

CommandOutput renderConfigDiff(const Result<json>& answer, bool json_output) {
  CommandOutput out = renderAnswer(answer, json_output, "tandem config diff", [](const json& body) {
    const std::string head = textOf(body, "file") + " against the running config (generation " +
                             numberOf(body, "generation") + "):\n";
    const std::string changes = changesText(body);
    if (changes.empty()) return head + "  nothing: the file says what is running.\n";
    return head + changes + "`tandem config reload` applies exactly this and nothing else.\n";
  });
  if (answer) {
    out = refusedOutput(std::move(out), *answer,
                        "tandem config diff: a reload of " + textOf(*answer, "file") +
                            " would be refused, and nothing would change:");
  }
  return out;
}

CommandOutput renderReload(const Result<json>& answer, bool json_output) {
  CommandOutput out =
      renderAnswer(answer, json_output, "tandem config reload", [](const json& body) {
        const std::string changes = changesText(body);
        const std::string head = "Reloaded " + textOf(body, "file") + " (generation " +
                                 numberOf(body, "generation") + ")";
        if (changes.empty()) return head + ": nothing changed.\n";
        return head + ", applied:\n" + changes;
      });
  if (answer) {
    out = refusedOutput(
        std::move(out), *answer,
        "tandem config reload: refused, and nothing changed (" + textOf(*answer, "file") + "):");
  }
  return out;
}

CommandOutput renderConfigShow(const Result<json>& answer, bool json_output) {
  CommandOutput out = renderAnswer(answer, json_output, "tandem config show", [](const json& body) {
    std::string text = textOf(body, "text");
    if (!text.empty() && text.back() != '\n') text += "\n";
    return text;
  });
  if (answer && !json_output && out.exit_code == kExitOk) {
    auto changed = answer->find("file_changed");
    if (changed != answer->end() && changed->is_boolean() && changed->get<bool>()) {
      out.err = "tandem config show: this is generation " + numberOf(*answer, "generation") +
                " as tandemd read it; " + textOf(*answer, "file") +
                " has changed since (`tandem config diff` shows how)\n";
    }
  }
  return out;
}

}  // namespace tandem::cli
