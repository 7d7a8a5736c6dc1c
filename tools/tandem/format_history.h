#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/result.h"
#include "format_status.h"

// `tandem history [--since TIME]`: what tandemd's history (protocol.h) says, one line per entry,
// in local time. Pure, golden-tested (test/cli/golden/history).
namespace tandem::cli {

// --since: a duration back from now_ms ("30m", "2h", "1h30m") or a local time
// ("2026-12-03 14:05", "2026-12-03 14:05:30", "2026-12-03"). The wall-clock ms it means.
[[nodiscard]] Result<uint64_t> parseSince(const std::string& text, uint64_t now_ms);

// "2026-12-03 14:05:30.123" in the local time zone.
std::string formatWallClock(uint64_t ms);

CommandOutput renderHistory(const Result<nlohmann::json>& answer, bool json);

}  // namespace tandem::cli
