#include "common/text.h"

#include <algorithm>

namespace tandem {

namespace {

// Levenshtein distance of a and b, or limit + 1 as soon as it is known to exceed limit (every
// entry of a row above it). Two rows of scratch space reused across calls: a file with tens of
// thousands of unknown keys asks this for each key against each known one.
size_t boundedDistance(std::string_view a, std::string_view b, size_t limit,
                       std::vector<size_t>& prev, std::vector<size_t>& cur) {
  const size_t la = a.size(), lb = b.size();
  if ((la > lb ? la - lb : lb - la) > limit) return limit + 1;
  prev.resize(lb + 1);
  cur.resize(lb + 1);
  size_t* p = prev.data();
  size_t* c = cur.data();
  for (size_t j = 0; j <= lb; ++j) p[j] = j;
  for (size_t i = 1; i <= la; ++i) {
    c[0] = i;
    size_t row_min = c[0];
    for (size_t j = 1; j <= lb; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      c[j] = std::min({p[j] + 1, c[j - 1] + 1, p[j - 1] + cost});
      row_min = std::min(row_min, c[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(p, c);
  }
  return std::min(p[lb], limit + 1);
}

}  // namespace

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev, cur;
  return boundedDistance(a, b, std::max(a.size(), b.size()), prev, cur);
}

std::optional<std::string> closestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  // A typo is a few edits away; past a third of the word it is another word.
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::vector<size_t> prev, cur;
  const std::string* best = nullptr;
  size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    // Only a strictly closer candidate can win, so the bound tightens as matches are found.
    const size_t d = boundedDistance(word, c, best_d - 1, prev, cur);
    if (d < best_d) {
      best = &c;
      best_d = d;
      if (d == 0) break;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::string joinAlternatives(const std::vector<std::string>& items, std::string_view last_sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += (i + 1 == items.size()) ? std::string(last_sep) : std::string(", ");
    out += items[i];
  }
  return out;
}

std::string quote(std::string_view text, size_t max, Quoting how) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if ((c >= 0x20 && c < 0x7f) || (how == Quoting::kToml && c > 0x7f)) {
          out += static_cast<char>(c);
        } else if (how == Quoting::kToml) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        }
    }
  }
  out += '"';
  if (text.size() > max) out += "...";
  return out;
}

}  // namespace tandem
