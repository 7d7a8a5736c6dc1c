#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/duration.h"
#include "common/ip_address.h"
#include "config/diagnostics.h"

namespace tandem::config {

struct Position {
  int line = 1;
  int column = 1;
};

Position positionOf(const toml::source_region& r);

// What all readers of one load share: the file name for messages, the findings, and every
// "table.key" asked for (so a test can check that the reference page documents each one).
// "a", "b" or "c": names quoted for a message.
std::string quotedAlternatives(const std::vector<std::string>& names);

struct ReadContext {
  std::string file;
  Diagnostics diags;
  std::set<std::string> known_keys;
};

// Reads one TOML table against what tandem knows of it. Every getter marks its key as known
// and reports a wrong type or value as a diagnostic (and returns nullopt); finish() reports
// the keys nobody asked for, with a "did you mean".
class TableReader {
 public:
  // path: how messages name this table, e.g. "cluster" or "virtual_server.real_server".
  // array_item: the table is one element of an array of tables ([[path]]), which is how
  // messages then write its header.
  TableReader(const toml::table& table, std::string path, ReadContext& ctx,
              bool array_item = false);

  const std::string& path() const { return path_; }
  // How the table's header is written in the file: [cluster] or [[node]].
  std::string header() const { return array_item_ ? "[[" + path_ + "]]" : "[" + path_ + "]"; }
  Position where() const;                      // the table itself
  Position where(std::string_view key) const;  // the key's value, or the table if absent
  bool has(std::string_view key) const;

  std::optional<std::string> string(std::string_view key, bool required = false);
  std::optional<int64_t> integer(std::string_view key, int64_t min, int64_t max);
  std::optional<bool> boolean(std::string_view key);
  // A share: a float or integer from 0 to 1.
  std::optional<double> fraction(std::string_view key);
  std::optional<Millis> duration(std::string_view key, Millis min, Millis max);
  std::optional<std::vector<std::string>> strings(std::string_view key);
  std::optional<IpAddress> address(std::string_view key);
  std::optional<std::vector<IpAddress>> addresses(std::string_view key);

  template <typename E>
  std::optional<E> choice(std::string_view key,
                          const std::vector<std::pair<std::string, E>>& options) {
    auto s = string(key);
    if (!s) return std::nullopt;
    for (const auto& [name, value] : options) {
      if (*s == name) return value;
    }
    std::vector<std::string> names;
    for (const auto& o : options) names.push_back("\"" + o.first + "\"");
    badValue(key, "\"" + *s + "\" is not allowed here", "use " + alternatives(names));
    return std::nullopt;
  }

  // A key whose value is parsed by the caller; marks it known and returns the node, if any.
  const toml::node* raw(std::string_view key);
  const toml::table* table(std::string_view key);
  // An array of tables ([[key]]), each wrapped with its own reader by the caller.
  std::vector<const toml::table*> tables(std::string_view key);

  // Reports a value the caller found wrong, at the key's position.
  void badValue(std::string_view key, const std::string& what, const std::string& allowed);
  void warnValue(std::string_view key, const std::string& what, const std::string& advice);
  // Marks keys as known without reading them (keys handled elsewhere).
  void known(std::string_view key) { asked_.insert(std::string(key)); }

  // Unknown keys. extra_hint(key) may return a better explanation than "unknown key" (for a key
  // that belongs somewhere else); an empty string falls back to the generic message.
  void finish(const std::function<std::string(const std::string&)>& extra_hint = {});

  static std::string alternatives(const std::vector<std::string>& names);

 private:
  const toml::node* get(std::string_view key);
  void wrongType(std::string_view key, const toml::node& n, std::string_view expected);
  std::string qualified(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  const toml::table& table_;
  std::string path_;
  ReadContext& ctx_;
  bool array_item_;
  std::set<std::string> asked_;
};

std::string_view tomlTypeName(const toml::node& n);

}  // namespace tandem::config
