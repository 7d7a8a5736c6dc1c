#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace tandem {

using Millis = std::chrono::milliseconds;

// Parses "250ms", "2s", "5m", "1h" and sums like "1m30s". Returns nullopt for anything else,
// including negative values and values past ~24 days (they do not fit a timer).
std::optional<Millis> parseDuration(std::string_view text);

// Is text spelled like a duration (digits and units), whatever its size? Tells a typo from a
// value too large for parseDuration.
bool isDurationSyntax(std::string_view text);

// The shortest exact spelling that parseDuration reads back: 1500ms -> "1500ms", 120000 -> "2m".
std::string formatDuration(Millis d);

}  // namespace tandem
