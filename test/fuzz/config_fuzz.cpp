// libFuzzer target: any bytes given to the config loader end in a config or in diagnostics,
// never in a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/config_loader.h"

namespace {

class AnyKeyFileSystem final : public tandem::config::FileSystem {
 public:
  std::optional<tandem::config::FileInfo> stat(const std::string& path) const override {
    if (path.find("missing") != std::string::npos) return std::nullopt;
    return tandem::config::FileInfo{true, 0600, 32};
  }
  tandem::Result<std::string> readFile(const std::string&, size_t) const override {
    return tandem::fail(tandem::ErrorCode::kNotFound, "no files here");
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const AnyKeyFileSystem fs;
  if (size > tandem::config::kMaxConfigBytes) return -1;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  tandem::config::LoadResult r = tandem::config::loadConfigText(text, "fuzz.conf", fs);
  // Every finding must carry a place and a message.
  for (const auto& d : r.diagnostics.all()) {
    if (d.message.empty() || d.line < 0 || d.column < 0) __builtin_trap();
  }
  if (r.ok() == r.diagnostics.hasErrors()) __builtin_trap();
  return 0;
}
