#pragma once

#include <string>
#include <vector>

#include "common/result.h"

// How an importer reads its source files (and keepalived's `include` globs), behind an
// interface so that the parsers stay pure: the tool hands in the file system, the tests a map.
namespace tandem::importer {

class SourceReader {
 public:
  virtual ~SourceReader() = default;
  // The whole file; an error names the path and the cause.
  virtual Result<std::string> read(const std::string& path) const = 0;
  // The paths a shell glob matches, sorted; none is not an error.
  virtual std::vector<std::string> glob(const std::string& pattern) const = 0;
};

// The real file system (the tool's); files over 4 MiB are refused.
class PosixSourceReader final : public SourceReader {
 public:
  Result<std::string> read(const std::string& path) const override;
  std::vector<std::string> glob(const std::string& pattern) const override;
};

}  // namespace tandem::importer
