#include <sys/stat.h>

#include "common/state_files.h"
#include "ipvs/owned_services.h"

namespace tandem::resources::ipvs {

namespace {
// A file of a few thousand services is some tens of KiB; anything far bigger is not ours.
constexpr size_t kMaxBytes = 4 << 20;
}  // namespace

Result<std::optional<std::string>> OwnedFile::read() { return readSmallFile(path_, kMaxBytes); }

Result<void> OwnedFile::write(const std::string& text) {
  const size_t slash = path_.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    // The state directory may not exist yet (a tandemd without a cluster creates none).
    ::mkdir(path_.substr(0, slash).c_str(), 0755);
  }
  return writeFileAtomically(path_, text);
}

}  // namespace tandem::resources::ipvs
