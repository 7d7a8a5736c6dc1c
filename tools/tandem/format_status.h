#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/result.h"

// How `tandem` shows what tandemd answered. Pure: JSON in, text and an exit code out, so the
// output is golden-tested (test/cli/golden) without a daemon.
namespace tandem::cli {

// A command's whole effect on the terminal.
struct CommandOutput {
  std::string out;  // stdout
  std::string err;  // stderr
  int exit_code = 0;
};

// The exit code for a failed daemon command: kExitInvalid when the request itself was wrong
// (an unknown node, a bad argument), kExitFailed for everything else (unreachable, refused,
// timed out, the operation failed).
int exitCodeFor(const Error& error);

// The status document (protocol.h) as a readable summary, in the spirit of crm_mon: the
// cluster, the local node and who is ACTIVE, then a table of nodes, then what this director
// holds, then its host routes (route health injection), then any rejected frames.
// Tolerant: a field that is missing or of the wrong type shows as "?" rather than failing.
std::string formatStatus(const nlohmann::json& status);

// "180ms", "2.4s", "3m07s", "2h05m": how long ago a heartbeat was heard.
std::string formatAge(int64_t ms);

// What a read command prints for callDaemon's result: text(answer), or with --json the body as
// tandemd sent it (pretty-printed); a failure or {"ok": false} goes to stderr prefixed with
// "COMMAND: " (or, with --json, as a JSON object to stdout) with its exit code.
CommandOutput renderAnswer(const Result<nlohmann::json>& answer, bool json,
                           const std::string& command,
                           const std::function<std::string(const nlohmann::json&)>& text);

// One frame of `tandem status --watch`: the cursor home, each line of text followed by "erase to
// the end of the line", then "erase below". Drawn over the last frame, never after a blank
// screen: no flicker. The first frame clears the screen once (first = true).
std::string watchFrame(const std::string& text, bool first);

// What `tandem status` prints for callDaemon's result: the summary, or with --json the body as
// tandemd sent it (pretty-printed); a failure or {"ok": false} goes to stderr (or, with
// --json, as a JSON object to stdout) with its exit code.
CommandOutput renderStatus(const Result<nlohmann::json>& answer, bool json);

}  // namespace tandem::cli
