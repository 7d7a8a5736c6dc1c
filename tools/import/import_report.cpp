#include "import_report.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <utility>

namespace tandem::importer {

std::string_view fateName(Fate f) {
  switch (f) {
    case Fate::kMapped:
      return "mapped";
    case Fate::kDiffers:
      return "differs";
    case Fate::kDropped:
      return "dropped";
  }
  return "mapped";
}

std::string ImportError::text() const {
  if (line == 0) {  // about a whole file (or none): the message names it when it can
    if (file.empty() || message.rfind(file, 0) == 0) return message;
    return file + ": " + message;
  }
  return file + ":" + std::to_string(line) + ": " + message;
}

void Report::mapped(const std::string& file, int line, std::string construct, std::string key) {
  lines_.push_back({file, line, std::move(construct), Fate::kMapped, std::move(key), ""});
}

void Report::differs(const std::string& file, int line, std::string construct, std::string key,
                     std::string reason) {
  lines_.push_back(
      {file, line, std::move(construct), Fate::kDiffers, std::move(key), std::move(reason)});
}

void Report::dropped(const std::string& file, int line, std::string construct, std::string nearest,
                     std::string reason) {
  lines_.push_back(
      {file, line, std::move(construct), Fate::kDropped, std::move(nearest), std::move(reason)});
}

size_t Report::mappedLineCount() const {
  std::set<std::pair<std::string, int>> seen;
  for (const auto& l : lines_) {
    if (l.fate != Fate::kDropped) seen.emplace(l.file, l.line);
  }
  return seen.size();
}

size_t Report::droppedCount() const {
  return static_cast<size_t>(std::count_if(
      lines_.begin(), lines_.end(), [](const ReportLine& l) { return l.fate == Fate::kDropped; }));
}

namespace {

std::vector<ReportLine> sortedLines(const std::vector<ReportLine>& lines) {
  std::vector<ReportLine> out = lines;
  std::stable_sort(out.begin(), out.end(), [](const ReportLine& a, const ReportLine& b) {
    return std::tie(a.file, a.line) < std::tie(b.file, b.line);
  });
  return out;
}

}  // namespace

std::string Report::text() const {
  std::ostringstream out;
  for (const auto& l : sortedLines(lines_)) {
    std::string where = l.file + ":" + std::to_string(l.line);
    switch (l.fate) {
      case Fate::kMapped:
        out << where << " -> " << l.key << " (" << l.construct << ")\n";
        break;
      case Fate::kDiffers:
        out << where << " -> " << l.key << " (" << l.construct << "), differs: " << l.reason
            << "\n";
        break;
      case Fate::kDropped:
        out << where << ": dropped " << l.construct << ": " << l.reason;
        if (!l.key.empty()) out << "; nearest: " << l.key;
        out << "\n";
        break;
    }
  }
  for (const auto& n : notes_) out << "note: " << n << "\n";
  out << mappedLineCount() << " lines mapped, " << droppedCount() << " constructs dropped\n";
  return out.str();
}

nlohmann::json Report::json() const {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& l : sortedLines(lines_)) {
    nlohmann::json e = {{"file", l.file},
                        {"line", l.line},
                        {"construct", l.construct},
                        {"fate", std::string(fateName(l.fate))}};
    if (l.fate == Fate::kDropped) {
      e["nearest"] = l.key;
    } else {
      e["key"] = l.key;
    }
    if (!l.reason.empty()) e["reason"] = l.reason;
    entries.push_back(std::move(e));
  }
  return {{"entries", entries},
          {"notes", notes_},
          {"mapped_lines", mappedLineCount()},
          {"dropped", droppedCount()}};
}

}  // namespace tandem::importer
