// libFuzzer target: any bytes given to the ldirectord importer as ldirectord.cf end in a
// tandem.conf or in errors that name a line, never in a crash, a hang, an exception or a
// sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "importer.h"

namespace {

// The input as the one file there is.
class OneFileReader final : public tandem::importer::SourceReader {
 public:
  explicit OneFileReader(std::string text) : text_(std::move(text)) {}
  tandem::Result<std::string> read(const std::string& path) const override {
    if (path != "ldirectord.cf") return tandem::fail(tandem::ErrorCode::kNotFound, path);
    return text_;
  }
  std::vector<std::string> glob(const std::string&) const override { return {}; }

 private:
  std::string text_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As PosixSourceReader refuses: larger files are not config files.
  if (size > (4u << 20)) return -1;
  OneFileReader reader(std::string(reinterpret_cast<const char*>(data), size));
  tandem::importer::ImportResult r =
      tandem::importer::importLdirectord("ldirectord.cf", reader, {});
  // Either a config or a reason not to write one.
  if (r.errors.empty() == r.conf.empty()) __builtin_trap();
  for (const auto& e : r.errors) {
    if (e.message.empty() || e.line < 1) __builtin_trap();
  }
  return 0;
}
