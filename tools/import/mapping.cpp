#include "mapping.h"

#include <sstream>

namespace tandem::importer {

const Mapping* findMapping(Source source, std::string_view block, std::string_view keyword) {
  auto table = source == Source::kKeepalived ? keepalivedMappings() : ldirectordMappings();
  for (const auto& m : table) {
    if (m.block == block && m.keyword == keyword) return &m;
  }
  // Any other keyword of a block: its catch-all row, when it has one.
  for (const auto& m : table) {
    if (m.block == block && m.keyword == "*") return &m;
  }
  return nullptr;
}

void record(Report& report, Source source, const std::string& file, int line,
            std::string_view block, std::string_view keyword, const std::string& detail) {
  std::string construct =
      block.empty() ? std::string(keyword) : std::string(block) + "." + std::string(keyword);
  const Mapping* m = findMapping(source, block, keyword);
  if (m == nullptr) {
    report.dropped(file, line, construct, "", "not in the importer's mapping");
    return;
  }
  std::string reason(m->note);
  if (!detail.empty()) reason += reason.empty() ? detail : "; " + detail;
  switch (m->fate) {
    case Fate::kMapped:
      if (detail.empty()) {
        report.mapped(file, line, construct, std::string(m->key));
      } else {
        report.differs(file, line, construct, std::string(m->key), reason);
      }
      break;
    case Fate::kDiffers:
      report.differs(file, line, construct, std::string(m->key), reason);
      break;
    case Fate::kDropped:
      report.dropped(file, line, construct, std::string(m->key), reason);
      break;
  }
}

namespace {

// Markdown table cells: a | would end the cell.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out;
}

void table(std::ostringstream& out, std::string_view name, std::span<const Mapping> rows) {
  out << "| " << name << " | in | tandem | how it differs, or why it has none |\n";
  out << "|---|---|---|---|\n";
  for (const auto& m : rows) {
    if (m.keyword == "*") {
      out << "| any other | ";
    } else {
      out << "| `" << cell(m.keyword) << "` | ";
    }
    out << (m.block.empty() ? "" : "`") << cell(m.block) << (m.block.empty() ? "" : "`") << " | ";
    if (m.fate == Fate::kDropped) {
      out << "none";
      if (!m.key.empty()) out << " (nearest: `" << cell(m.key) << "`)";
    } else {
      out << "`" << cell(m.key) << "`";
    }
    out << " | " << cell(m.note) << " |\n";
  }
}

}  // namespace

std::string mappingTableMarkdown() {
  std::ostringstream out;
  table(out, "keepalived", keepalivedMappings());
  out << "\n";
  table(out, "ldirectord", ldirectordMappings());
  return out.str();
}

}  // namespace tandem::importer
