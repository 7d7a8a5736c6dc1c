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
  bool symlink = false;  // the path itself is a symbolic link (the rest is its target's)
};

// What config loading needs from the file system, behind an interface so that loading stays
// a pure function in tests.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  virtual std::optional<FileInfo> stat(const std::string& path) const = 0;
  // Reads at most max_bytes; a longer file is an error that says so.
  virtual Result<std::string> readFile(const std::string& path, size_t max_bytes) const = 0;
  // A secret (a cluster key): refused unless it is a regular file, not a symbolic link, that
  // only its owner may access, of min_bytes to max_bytes, each refusal naming the path and what
  // to do. The caller wipes the result (OPENSSL_cleanse) once it has taken it. This default
  // checks stat() and then reads; PosixFileSystem opens the file once (O_NOFOLLOW) and checks
  // the open descriptor, its owner included.
  virtual Result<std::string> readSecret(const std::string& path, size_t min_bytes,
                                         size_t max_bytes) const;
  // Where systemd put this service's credentials ($CREDENTIALS_DIRECTORY); "" when it did not
  // (tandemd not started by a unit with LoadCredential=, or a shell).
  virtual std::string credentialsDirectory() const { return ""; }
};

// The refusals readSecret words, shared by every FileSystem (and by the config validation).
std::string secretModeError(const std::string& path, mode_t mode);
std::string secretSizeError(const std::string& path, off_t size, size_t min_bytes,
                            size_t max_bytes);

class PosixFileSystem final : public FileSystem {
 public:
  std::optional<FileInfo> stat(const std::string& path) const override;
  Result<std::string> readFile(const std::string& path, size_t max_bytes) const override;
  Result<std::string> readSecret(const std::string& path, size_t min_bytes,
                                 size_t max_bytes) const override;
  std::string credentialsDirectory() const override;
};

}  // namespace tandem::config
