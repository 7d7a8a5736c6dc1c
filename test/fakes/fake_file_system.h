#pragma once

#include <map>
#include <optional>
#include <string>

#include "config/file_system.h"

namespace tandem::fakes {

// An in-memory file system for config loading: regular files with contents and modes.
class FakeFileSystem final : public config::FileSystem {
 public:
  void write(const std::string& path, std::string contents, mode_t mode = 0644) {
    files_[path] = File{std::move(contents), mode};
  }
  void remove(const std::string& path) { files_.erase(path); }
  void clear() { files_.clear(); }
  // $CREDENTIALS_DIRECTORY as systemd would set it; "" as without credentials.
  std::string credentials_directory;
  std::string credentialsDirectory() const override { return credentials_directory; }

  std::optional<config::FileInfo> stat(const std::string& path) const override {
    auto it = files_.find(path);
    if (it == files_.end()) return std::nullopt;
    return config::FileInfo{true, it->second.mode, static_cast<off_t>(it->second.contents.size())};
  }

  Result<std::string> readFile(const std::string& path, size_t max_bytes) const override {
    auto it = files_.find(path);
    if (it == files_.end()) {
      return fail(ErrorCode::kNotFound, "cannot open " + path + ": No such file or directory");
    }
    if (it->second.contents.size() > max_bytes) {
      return fail(ErrorCode::kInvalidArgument,
                  "file is larger than " + std::to_string(max_bytes) + " bytes");
    }
    return it->second.contents;
  }

 private:
  struct File {
    std::string contents;
    mode_t mode = 0644;
  };
  std::map<std::string, File> files_;
};

}  // namespace tandem::fakes
