#pragma once

#include <string>
#include <vector>

namespace tandem::config {

// One finding about a config file, at file:line:column. Errors make the file unusable;
// warnings are printed and the file is still used.
struct Diagnostic {
  enum class Severity { kError, kWarning };
  Severity severity = Severity::kError;
  std::string file;
  int line = 0;  // 1-based; 0 when the finding concerns the whole file
  int column = 0;
  std::string message;  // "what is wrong; what is allowed"

  // "file:line:column: message", warnings with "warning: " before the message.
  std::string format() const;
};

class Diagnostics {
 public:
  void error(std::string file, int line, int column, std::string message);
  void warning(std::string file, int line, int column, std::string message);

  const std::vector<Diagnostic>& all() const { return items_; }
  int errorCount() const;
  bool hasErrors() const { return errorCount() > 0; }
  // Sorted by position, so a reader goes through the file top to bottom.
  std::vector<Diagnostic> sorted() const;
  // At most max_lines findings, then a line saying how many more there are: a file of garbage
  // should not bury the first (and most useful) messages under thousands.
  std::string formatAll(size_t max_lines = 100) const;

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace tandem::config
