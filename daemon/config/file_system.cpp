#include "config/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "common/read_all.h"

namespace tandem::config {

namespace {

std::string octal(mode_t mode) {
  char text[16];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::string secretModeError(const std::string& path, mode_t mode) {
  return "the key file " + path + " has mode " + octal(mode) +
         ", so its group or others have access; run `chmod 0600 " + path + "`";
}

std::string secretSizeError(const std::string& path, off_t size, size_t min_bytes,
                            size_t max_bytes) {
  return "the key file " + path + " has " + std::to_string(size) + " bytes; a key has " +
         std::to_string(min_bytes) + " to " + std::to_string(max_bytes) +
         " bytes, write a new one with `tandem keygen " + path + "`";
}

Result<std::string> FileSystem::readSecret(const std::string& path, size_t min_bytes,
                                           size_t max_bytes) const {
  auto info = stat(path);
  if (!info) return fail(ErrorCode::kNotFound, "cannot open " + path + ": no such file");
  if (info->symlink) {
    return fail(ErrorCode::kInvalidArgument,
                "the key file " + path +
                    " is a symbolic link, which tandem does not follow; point file at the key "
                    "itself");
  }
  if (!info->regular) {
    return fail(ErrorCode::kInvalidArgument,
                path + " is not a regular file; point file at the key written by `tandem keygen`");
  }
  if ((info->mode & 077) != 0) {
    return fail(ErrorCode::kPermissionDenied, secretModeError(path, info->mode));
  }
  if (info->size < static_cast<off_t>(min_bytes) || info->size > static_cast<off_t>(max_bytes)) {
    return fail(ErrorCode::kInvalidArgument,
                secretSizeError(path, info->size, min_bytes, max_bytes));
  }
  return readFile(path, max_bytes);
}

std::string PosixFileSystem::credentialsDirectory() const {
  const char* dir = std::getenv("CREDENTIALS_DIRECTORY");
  return dir != nullptr && dir[0] == '/' ? std::string(dir) : std::string();
}

std::optional<FileInfo> PosixFileSystem::stat(const std::string& path) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  FileInfo info{S_ISREG(st.st_mode), static_cast<mode_t>(st.st_mode & 07777), st.st_size};
  struct stat link {};
  info.symlink = ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
  return info;
}

Result<std::string> PosixFileSystem::readSecret(const std::string& path, size_t min_bytes,
                                                size_t max_bytes) const {
  // Opened once: everything below is checked on this descriptor, so the file cannot be swapped
  // between the check and the read. O_NONBLOCK: a FIFO planted there must not block the open.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) {
      return fail(ErrorCode::kInvalidArgument,
                  "the key file " + path +
                      " is a symbolic link, which tandem does not follow; point file at the key "
                      "itself");
    }
    return fail(errnoError(errno, "cannot open " + path));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(errnoError(errno, "cannot stat " + path));
  if (!S_ISREG(st.st_mode)) {
    return fail(ErrorCode::kInvalidArgument,
                path + " is not a regular file; point file at the key written by `tandem keygen`");
  }
  const uid_t me = ::geteuid();
  if (st.st_uid != me) {
    return fail(ErrorCode::kPermissionDenied,
                "the key file " + path + " is owned by uid " + std::to_string(st.st_uid) +
                    ", not by uid " + std::to_string(me) +
                    " that reads it, so another user could have written it; run `chown " +
                    std::to_string(me) + " " + path + "`");
  }
  if ((st.st_mode & 077) != 0) {
    return fail(ErrorCode::kPermissionDenied, secretModeError(path, st.st_mode));
  }
  if (st.st_size < static_cast<off_t>(min_bytes) || st.st_size > static_cast<off_t>(max_bytes)) {
    return fail(ErrorCode::kInvalidArgument,
                secretSizeError(path, st.st_size, min_bytes, max_bytes));
  }
  // Read into room sized once, so no growth leaves a copy of the key in freed memory.
  std::string out(max_bytes + 1, '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errnoError(errno, "cannot read " + path));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got < min_bytes || got > max_bytes) {
    return fail(ErrorCode::kInvalidArgument,
                secretSizeError(path, static_cast<off_t>(got), min_bytes, max_bytes));
  }
  out.resize(got);  // shrinking keeps the buffer: the caller's wipe reaches every byte read
  return out;
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
  auto got = readAllAtMost(fd, path, max_bytes);
  if (!got) return fail(got.error());
  if (!*got) {
    return fail(ErrorCode::kInvalidArgument, "file is larger than " + std::to_string(max_bytes) +
                                                 " bytes; a tandem config is at most that big");
  }
  return std::move(**got);
}

}  // namespace tandem::config
