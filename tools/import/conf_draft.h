#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// The tandem.conf an importer writes, as ordered TOML tables of key = value lines, each able to
// carry a comment (where in the source it came from, or what to check). Pure; render() is the
// whole file.
namespace tandem::importer {

// TOML literals, quoted and escaped as the loader reads them back.
std::string tomlString(std::string_view s);
std::string tomlStrings(const std::vector<std::string>& items);  // ["a", "b"]
// A duration from milliseconds, in the largest unit that keeps it whole: "6s", "1500ms", "5m".
std::string tomlDuration(int64_t ms);

struct ConfEntry {
  std::string key;
  std::string value;    // a TOML literal (see the helpers above)
  std::string comment;  // "" for none; written at the end of the line
};

struct ConfTable {
  std::string header;                 // "[cluster]", "[[node]]", ... ; "" for the top
  std::vector<std::string> comments;  // lines written above the header, without "# "
  std::vector<ConfEntry> entries;

  ConfTable& set(std::string key, std::string value, std::string comment = "");
  // A key the operator must fill in or check, written commented out.
  ConfTable& suggest(std::string key, std::string value, std::string comment);
};

class ConfDraft {
 public:
  // The comment at the top of the file (without "# ").
  void header(std::vector<std::string> lines) { header_ = std::move(lines); }
  ConfTable& add(std::string header, std::vector<std::string> comments = {});
  const std::vector<ConfTable>& tables() const { return tables_; }
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<ConfTable> tables_;
};

}  // namespace tandem::importer
