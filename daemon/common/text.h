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

}  // namespace tandem
