#pragma once

#include <optional>
#include <string>

#include "common/result.h"

namespace tandem {

// The files tandemd keeps in its state directory (the role, the holder, the owned IPVS
// services), behind an interface: production writes them with PosixStateFiles, tests keep them
// in memory. Small files only; each write replaces the whole file.
class StateFiles {
 public:
  virtual ~StateFiles() = default;
  // mkdir -p with mode 0755; a directory that exists is fine.
  [[nodiscard]] virtual Result<void> makeDirectory(const std::string& path) = 0;
  // Atomically: after a crash the file holds either the old or the new contents, never a mix.
  [[nodiscard]] virtual Result<void> write(const std::string& path,
                                           const std::string& contents) = 0;
  // nullopt when there is no such file.
  [[nodiscard]] virtual Result<std::optional<std::string>> read(const std::string& path) const = 0;
  // A file that is not there is fine.
  [[nodiscard]] virtual Result<void> remove(const std::string& path) = 0;
  virtual bool exists(const std::string& path) const = 0;
};

// The one atomic file write: a temporary beside the file opened with O_NOFOLLOW (a planted
// link is refused, not followed), a write loop, fsync of the file, rename, then fsync of the
// directory so that the rename itself survives a power cut.
[[nodiscard]] Result<void> writeFileAtomically(const std::string& path, const std::string& contents,
                                               unsigned mode = 0644);

// Reads a whole small file (O_NOFOLLOW): nullopt when there is none, an error naming the path
// when it is larger than max_bytes or cannot be read.
[[nodiscard]] Result<std::optional<std::string>> readSmallFile(const std::string& path,
                                                               size_t max_bytes);

class PosixStateFiles final : public StateFiles {
 public:
  Result<void> makeDirectory(const std::string& path) override;
  Result<void> write(const std::string& path, const std::string& contents) override {
    return writeFileAtomically(path, contents);
  }
  Result<std::optional<std::string>> read(const std::string& path) const override;
  Result<void> remove(const std::string& path) override;
  bool exists(const std::string& path) const override;
};

}  // namespace tandem
