#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "common/result.h"

namespace tandem::config {

struct FileInfo {
  bool regular = false;
  mode_t mode = 0;  // permission bits
  off_t size = 0;
};

// What config loading needs from the file system, behind an interface so that loading stays
// a pure function in tests.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  virtual std::optional<FileInfo> stat(const std::string& path) const = 0;
  // Reads at most max_bytes; a longer file is an error that says so.
  virtual Result<std::string> readFile(const std::string& path, size_t max_bytes) const = 0;
};

class PosixFileSystem final : public FileSystem {
 public:
  std::optional<FileInfo> stat(const std::string& path) const override;
  Result<std::string> readFile(const std::string& path, size_t max_bytes) const override;
};

}  // namespace tandem::config
