#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

// Levenshtein distance, for "did you mean" hints.
size_t editDistance(std::string_view a, std::string_view b);

// The candidate closest to word, if it is close enough to be a likely typo.
std::optional<std::string> closestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);

// "a, b or c"
std::string joinAlternatives(const std::vector<std::string>& items, std::string_view last_sep);

// Where a quoted text goes: a message, a log line or a terminal (kMessage), or a TOML file that
// the config loader reads back (kToml).
enum class Quoting { kMessage, kToml };

// text in double quotes: printable ASCII as is; \", \\, \r, \n and \t; any other byte as
// \xNN for a message, so that nothing unprintable passes through; for TOML, control bytes as
// \u00NN and the rest (UTF-8) as is. Past max bytes, cut and followed by "...". tandem's one
// quoting helper (a word for /bin/sh is another language: tools/import's shellQuote).
std::string quote(std::string_view text, size_t max = std::string_view::npos,
                  Quoting how = Quoting::kMessage);

}  // namespace tandem
