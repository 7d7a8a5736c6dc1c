#include "common/read_all.h"

#include <unistd.h>

#include <array>
#include <cerrno>

namespace tandem {

Result<std::optional<std::string>> readAllAtMost(int fd, const std::string& path,
                                                 size_t max_bytes) {
  std::string out;
  std::array<char, 65536> buf;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return fail(errnoError(err, "cannot read " + path));
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return std::optional<std::string>();
    }
  }
  ::close(fd);
  return std::optional<std::string>(std::move(out));
}

}  // namespace tandem
