#include "conf_draft.h"

#include <sstream>

#include "common/text.h"

namespace tandem::importer {

std::string tomlString(std::string_view s) {
  return quote(s, std::string_view::npos, Quoting::kToml);
}

std::string tomlStrings(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += tomlString(items[i]);
  }
  return out + "]";
}

std::string tomlDuration(int64_t ms) {
  if (ms != 0 && ms % 3600000 == 0) return "\"" + std::to_string(ms / 3600000) + "h\"";
  if (ms != 0 && ms % 60000 == 0) return "\"" + std::to_string(ms / 60000) + "m\"";
  if (ms % 1000 == 0) return "\"" + std::to_string(ms / 1000) + "s\"";
  return "\"" + std::to_string(ms) + "ms\"";
}

ConfTable& ConfTable::set(std::string key, std::string value, std::string comment) {
  for (auto& e : entries) {
    if (e.key == key) {  // the last word wins, as in the source configs
      e.value = std::move(value);
      e.comment = std::move(comment);
      return *this;
    }
  }
  entries.push_back({std::move(key), std::move(value), std::move(comment)});
  return *this;
}

ConfTable& ConfTable::suggest(std::string key, std::string value, std::string comment) {
  entries.push_back({"# " + std::move(key), std::move(value), std::move(comment)});
  return *this;
}

ConfTable& ConfDraft::add(std::string header, std::vector<std::string> comments) {
  tables_.push_back({std::move(header), std::move(comments), {}});
  return tables_.back();
}

std::string ConfDraft::render() const {
  std::ostringstream out;
  for (const auto& h : header_) out << (h.empty() ? "#" : "# " + h) << "\n";
  for (const auto& t : tables_) {
    out << "\n";
    for (const auto& c : t.comments) out << (c.empty() ? "#" : "# " + c) << "\n";
    if (!t.header.empty()) out << t.header << "\n";
    for (const auto& e : t.entries) {
      out << e.key << " = " << e.value;
      if (!e.comment.empty()) out << "  # " << e.comment;
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace tandem::importer
