// libFuzzer target: any bytes given to the keepalived importer as keepalived.conf end in a
// tandem.conf or in errors that name a line, never in a crash, a hang, an exception or a
// sanitizer report. Every include pattern finds the file itself, so that the include paths
// (and their loop refusal) are fuzzed too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "importer.h"

namespace {

class OneFileReader final : public tandem::importer::SourceReader {
 public:
  explicit OneFileReader(std::string text) : text_(std::move(text)) {}
  tandem::Result<std::string> read(const std::string& path) const override {
    if (path != "keepalived.conf") return tandem::fail(tandem::ErrorCode::kNotFound, path);
    return text_;
  }
  std::vector<std::string> glob(const std::string&) const override { return {"keepalived.conf"}; }

 private:
  std::string text_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (4u << 20)) return -1;  // as PosixSourceReader refuses
  OneFileReader reader(std::string(reinterpret_cast<const char*>(data), size));
  tandem::importer::ImportOptions options;
  options.config_id = "lb1";
  tandem::importer::ImportResult r =
      tandem::importer::importKeepalived({"keepalived.conf"}, reader, options);
  if (r.errors.empty() == r.conf.empty()) __builtin_trap();
  for (const auto& e : r.errors) {
    if (e.message.empty() || e.line < 1) __builtin_trap();
  }
  return 0;
}
