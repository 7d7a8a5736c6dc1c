#pragma once

#include <fnmatch.h>

#include <map>
#include <string>
#include <vector>

#include "source_reader.h"

namespace tandem::importer::test {

// Files in memory, for the importers' unit tests.
class FakeSourceReader final : public SourceReader {
 public:
  std::map<std::string, std::string> files;

  Result<std::string> read(const std::string& path) const override {
    auto it = files.find(path);
    if (it == files.end()) return fail(ErrorCode::kNotFound, path + ": no such file");
    return it->second;
  }
  std::vector<std::string> glob(const std::string& pattern) const override {
    std::vector<std::string> out;
    for (const auto& [path, text] : files) {
      if (::fnmatch(pattern.c_str(), path.c_str(), FNM_PATHNAME) == 0) out.push_back(path);
    }
    return out;
  }
};

}  // namespace tandem::importer::test
