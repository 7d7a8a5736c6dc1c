#include "config/diagnostics.h"

#include <algorithm>
#include <tuple>

namespace tandem::config {

std::string Diagnostic::format() const {
  std::string out = file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  if (severity == Severity::kWarning) out += "warning: ";
  return out + message;
}

void Diagnostics::error(std::string file, int line, int column, std::string message) {
  items_.push_back(
      {Diagnostic::Severity::kError, std::move(file), line, column, std::move(message)});
}

void Diagnostics::warning(std::string file, int line, int column, std::string message) {
  items_.push_back(
      {Diagnostic::Severity::kWarning, std::move(file), line, column, std::move(message)});
}

int Diagnostics::errorCount() const {
  return static_cast<int>(std::count_if(items_.begin(), items_.end(), [](const Diagnostic& d) {
    return d.severity == Diagnostic::Severity::kError;
  }));
}

std::vector<Diagnostic> Diagnostics::sorted() const {
  std::vector<Diagnostic> out = items_;
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return out;
}

std::string Diagnostics::formatAll(size_t max_lines) const {
  std::string out;
  std::vector<Diagnostic> all = sorted();
  for (size_t i = 0; i < all.size() && i < max_lines; ++i) out += all[i].format() + "\n";
  if (all.size() > max_lines) {
    const Diagnostic& next = all[max_lines];
    out += next.file + ": " + std::to_string(all.size() - max_lines) +
           " more findings not shown; fix the ones above first\n";
  }
  return out;
}

}  // namespace tandem::config
