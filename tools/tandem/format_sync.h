#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/result.h"
#include "format_status.h"

// How `tandem sync status` prints tandemd's sync answer (protocol.h). Pure: JSON in, text and an
// exit code out, golden-tested (test/cli/golden/sync) without a daemon.
namespace tandem::cli {

// The configured sync, a table of this director's two kernel daemons (wanted, running, where,
// since when), a table of every director's connection table and backup daemon as their
// heartbeats say, and what a held-back failback waits for. A missing field shows as "?".
std::string formatSync(const nlohmann::json& answer);

// What `tandem sync status` prints for callDaemon's result, with the rules of renderStatus.
CommandOutput renderSync(const Result<nlohmann::json>& answer, bool json);

}  // namespace tandem::cli
