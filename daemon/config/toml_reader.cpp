#include "config/toml_reader.h"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "common/text.h"

namespace tandem::config {

Position positionOf(const toml::source_region& r) {
  if (r.begin.line == 0) return Position{};
  return Position{static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

std::string_view tomlTypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time:
      return "a date/time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

TableReader::TableReader(const toml::table& table, std::string path, ReadContext& ctx,
                         bool array_item)
    : table_(table), path_(std::move(path)), ctx_(ctx), array_item_(array_item) {}

Position TableReader::where() const {
  Position p = positionOf(table_.source());
  if (table_.source().begin.line == 0 && !table_.empty()) {
    // An implicit table ([a.b] without [a]) has no place of its own; use its first key.
    p = positionOf(table_.cbegin()->first.source());
  }
  return p;
}

Position TableReader::where(std::string_view key) const {
  if (const toml::node* n = table_.get(key)) return positionOf(n->source());
  return where();
}

bool TableReader::has(std::string_view key) const { return table_.contains(key); }

const toml::node* TableReader::get(std::string_view key) {
  asked_.insert(std::string(key));
  ctx_.known_keys.insert(qualified(key));
  return table_.get(key);
}

void TableReader::wrongType(std::string_view key, const toml::node& n, std::string_view expected) {
  Position p = positionOf(n.source());
  ctx_.diags.error(ctx_.file, p.line, p.column,
                   qualified(key) + " is " + std::string(tomlTypeName(n)) + "; it must be " +
                       std::string(expected));
}

void TableReader::badValue(std::string_view key, const std::string& what,
                           const std::string& allowed) {
  Position p = where(key);
  ctx_.diags.error(ctx_.file, p.line, p.column, qualified(key) + ": " + what + "; " + allowed);
}

void TableReader::warnValue(std::string_view key, const std::string& what,
                            const std::string& advice) {
  Position p = where(key);
  ctx_.diags.warning(ctx_.file, p.line, p.column, qualified(key) + ": " + what + "; " + advice);
}

std::optional<std::string> TableReader::string(std::string_view key, bool required) {
  const toml::node* n = get(key);
  if (!n) {
    if (required) {
      Position p = where();
      ctx_.diags.error(ctx_.file, p.line, p.column,
                       header() + " has no " + std::string(key) + "; it is required, add " +
                           std::string(key) + " = \"...\"");
    }
    return std::nullopt;
  }
  if (!n->is_string()) {
    wrongType(key, *n, "a string in quotes");
    return std::nullopt;
  }
  return n->value<std::string>();
}

std::optional<int64_t> TableReader::integer(std::string_view key, int64_t min, int64_t max) {
  const toml::node* n = get(key);
  if (!n) return std::nullopt;
  std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!n->is_integer()) {
    wrongType(key, *n, range);
    return std::nullopt;
  }
  int64_t v = *n->value<int64_t>();
  if (v < min || v > max) {
    badValue(key, std::to_string(v) + " is out of range", "it must be " + range);
    return std::nullopt;
  }
  return v;
}

std::optional<double> TableReader::fraction(std::string_view key) {
  const toml::node* n = get(key);
  if (!n) return std::nullopt;
  const std::string range = "a number from 0 to 1, e.g. 0.8";
  if (!n->is_floating_point() && !n->is_integer()) {
    wrongType(key, *n, range);
    return std::nullopt;
  }
  const double v =
      n->is_integer() ? static_cast<double>(*n->value<int64_t>()) : *n->value<double>();
  if (!(v >= 0.0 && v <= 1.0)) {  // NaN too
    std::ostringstream text;
    text << v;
    badValue(key, text.str() + " is out of range", "it must be " + range);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> TableReader::boolean(std::string_view key) {
  const toml::node* n = get(key);
  if (!n) return std::nullopt;
  if (!n->is_boolean()) {
    wrongType(key, *n, "true or false (without quotes)");
    return std::nullopt;
  }
  return n->value<bool>();
}

std::optional<Millis> TableReader::duration(std::string_view key, Millis min, Millis max) {
  const toml::node* n = get(key);
  if (!n) return std::nullopt;
  std::string allowed =
      "a duration from \"" + formatDuration(min) + "\" to \"" + formatDuration(max) + "\"";
  if (!n->is_string()) {
    if (n->is_integer() || n->is_floating_point()) {
      wrongType(key, *n, "a duration string with a unit, e.g. \"250ms\", \"2s\" or \"5m\"");
    } else {
      wrongType(key, *n, allowed);
    }
    return std::nullopt;
  }
  std::string s = *n->value<std::string>();
  auto d = parseDuration(s);
  if (!d) {
    if (isDurationSyntax(s)) {
      badValue(key, "\"" + s + "\" is out of range", "it must be " + allowed);
    } else {
      badValue(key, "\"" + s + "\" is not a duration",
               "write a number with ms, s, m or h, e.g. \"250ms\", \"2s\" or \"5m\"");
    }
    return std::nullopt;
  }
  if (*d < min || *d > max) {
    badValue(key, "\"" + s + "\" is out of range", "it must be " + allowed);
    return std::nullopt;
  }
  return d;
}

std::optional<std::vector<std::string>> TableReader::strings(std::string_view key) {
  const toml::node* n = get(key);
  if (!n) return std::nullopt;
  const toml::array* arr = n->as_array();
  if (!arr) {
    wrongType(key, *n, "an array of strings, e.g. [\"a\", \"b\"]");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const toml::node& e : *arr) {
    if (!e.is_string()) {
      wrongType(key, e, "a string (every element of " + std::string(key) + " is one)");
      return std::nullopt;
    }
    out.push_back(*e.value<std::string>());
  }
  return out;
}

std::optional<IpAddress> TableReader::address(std::string_view key) {
  auto s = string(key);
  if (!s) return std::nullopt;
  auto a = IpAddress::parse(*s);
  if (!a) {
    badValue(key, "\"" + *s + "\" is not an IP address",
             "write an IPv4 or IPv6 address without a port or prefix, e.g. \"198.51.100.1\"");
  }
  return a;
}

std::optional<std::vector<IpAddress>> TableReader::addresses(std::string_view key) {
  auto list = strings(key);
  if (!list) return std::nullopt;
  std::vector<IpAddress> out;
  bool ok = true;
  for (const auto& s : *list) {
    auto a = IpAddress::parse(s);
    if (!a) {
      badValue(key, "\"" + s + "\" is not an IP address",
               "each element must be an IPv4 or IPv6 address, e.g. \"198.51.100.1\"");
      ok = false;
      continue;
    }
    out.push_back(*a);
  }
  if (!ok) return std::nullopt;
  return out;
}

const toml::node* TableReader::raw(std::string_view key) { return get(key); }

const toml::table* TableReader::table(std::string_view key) {
  const toml::node* n = get(key);
  if (!n) return nullptr;
  if (!n->is_table()) {
    wrongType(key, *n, "a table, written [" + qualified(key) + "]");
    return nullptr;
  }
  return n->as_table();
}

std::vector<const toml::table*> TableReader::tables(std::string_view key) {
  const toml::node* n = get(key);
  std::vector<const toml::table*> out;
  if (!n) return out;
  const toml::array* arr = n->as_array();
  if (!arr) {
    wrongType(key, *n, "a list of tables, each written [[" + qualified(key) + "]]");
    return out;
  }
  for (const toml::node& e : *arr) {
    if (!e.is_table()) {
      wrongType(key, e, "a table, written [[" + qualified(key) + "]]");
      continue;
    }
    out.push_back(e.as_table());
  }
  return out;
}

void TableReader::finish(const std::function<std::string(const std::string&)>& extra_hint) {
  struct Unknown {
    Position at;
    std::string name;
  };
  std::vector<Unknown> unknown;
  for (const auto& [k, v] : table_) {
    std::string name(k.str());
    if (asked_.count(name) == 0) unknown.push_back({positionOf(k.source()), std::move(name)});
  }
  // In the file's order (the table's is by name), so that the hints go to the first ones.
  std::sort(unknown.begin(), unknown.end(), [](const Unknown& a, const Unknown& b) {
    return std::tie(a.at.line, a.at.column) < std::tie(b.at.line, b.at.column);
  });
  const std::vector<std::string> known(asked_.begin(), asked_.end());
  // A few unknown keys are typos and get a hint; past that many the file is something else
  // (tens of thousands of them must not cost seconds), and the first errors had the hints.
  constexpr size_t kHintedUnknownKeys = 100;
  size_t plain = 0;
  for (const auto& [p, name] : unknown) {
    std::string hint = extra_hint ? extra_hint(name) : std::string();
    if (!hint.empty()) {
      ctx_.diags.error(ctx_.file, p.line, p.column, hint);
      continue;
    }
    std::string where_text = path_.empty() ? "at the top level" : "in " + header();
    std::string msg = "unknown key \"" + name + "\" " + where_text;
    if (++plain <= kHintedUnknownKeys) {
      if (auto m = closestMatch(name, known)) {
        msg += "; did you mean \"" + *m + "\"?";
      } else {
        msg += "; known keys are " + joinAlternatives(known, " and ");
      }
    }
    ctx_.diags.error(ctx_.file, p.line, p.column, msg);
  }
}

std::string TableReader::alternatives(const std::vector<std::string>& names) {
  return joinAlternatives(names, " or ");
}

std::string quotedAlternatives(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const auto& n : names) q.push_back(quote(n));
  return TableReader::alternatives(q);
}

}  // namespace tandem::config
