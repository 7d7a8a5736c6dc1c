#include "config/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace tandem::config {

std::optional<FileInfo> PosixFileSystem::stat(const std::string& path) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileInfo{S_ISREG(st.st_mode), static_cast<mode_t>(st.st_mode & 07777), st.st_size};
}

Result<std::string> PosixFileSystem::readFile(const std::string& path, size_t max_bytes) const {
  // Check the type before opening: opening a FIFO for reading blocks until a writer comes.
  struct stat pre {};
  if (::stat(path.c_str(), &pre) != 0) return fail(errnoError(errno, "cannot open " + path));
  if (!S_ISREG(pre.st_mode)) {
    return fail(ErrorCode::kInvalidArgument, path +
                                                 " is not a regular file; give the path of "
                                                 "a config file");
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(errnoError(errno, "cannot open " + path));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(ErrorCode::kInvalidArgument, path + " is not a regular file");
  }
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return fail(errnoError(err, "cannot read " + path));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return fail(ErrorCode::kInvalidArgument, "file is larger than " + std::to_string(max_bytes) +
                                                   " bytes; a tandem config is at most that big");
    }
  }
  ::close(fd);
  return out;
}

}  // namespace tandem::config
