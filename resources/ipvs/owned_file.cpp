#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/state_files.h"
#include "ipvs/owned_services.h"

namespace tandem::resources::ipvs {

namespace {
// A file of a few thousand services is some tens of KiB; anything far bigger is not ours.
constexpr size_t kMaxBytes = 4 << 20;
}  // namespace

Result<std::optional<std::string>> OwnedFile::read() {
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return fail(errnoError(errno, "cannot open " + path_));
  }
  std::string text;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return fail(errnoError(err, "cannot read " + path_));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxBytes) {
      ::close(fd);
      return fail(ErrorCode::kInvalidArgument,
                  path_ + " is larger than " + std::to_string(kMaxBytes) + " bytes");
    }
  }
  ::close(fd);
  return std::optional<std::string>(std::move(text));
}

Result<void> OwnedFile::write(const std::string& text) {
  const size_t slash = path_.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    // The state directory may not exist yet (a tandemd without a cluster creates none).
    ::mkdir(path_.substr(0, slash).c_str(), 0755);
  }
  return writeFileAtomically(path_, text);
}

}  // namespace tandem::resources::ipvs
