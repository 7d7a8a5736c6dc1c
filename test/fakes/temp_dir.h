#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace tandem::fakes {

// A fresh directory under /tmp for a test that needs real files, removed with everything in it
// when the test ends. path() is empty when mkdtemp failed (the test should ASSERT on it).
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = "/tmp/" + prefix + ".XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    if (!path_.empty()) std::filesystem::remove_all(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tandem::fakes
