#pragma once

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "format_status.h"

// What `tandem config diff|reload|show` print for tandemd's answers (protocol.h's config-diff,
// reload and config-show). Pure, golden-tested (test/cli/golden/config).
namespace tandem::cli {

// The changes section by section, or that the file says what runs; a refused diff lists the
// keys that cannot change live and exits kExitInvalid (the file is what must change).
CommandOutput renderConfigDiff(const Result<nlohmann::json>& answer, bool json);
// What the reload applied, the same way; refused: kExitInvalid, and nothing changed.
CommandOutput renderReload(const Result<nlohmann::json>& answer, bool json);
// The running config as it was read; a note on stderr when the file differs from it now.
CommandOutput renderConfigShow(const Result<nlohmann::json>& answer, bool json);

}  // namespace tandem::cli
