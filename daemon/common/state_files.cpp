#include "common/state_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "common/read_all.h"

namespace tandem {

namespace {

// A state file is a line or two; anything larger is not one of ours.
constexpr size_t kMaxStateFile = 1 << 20;

std::string parentOf(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

Result<void> writeFileAtomically(const std::string& path, const std::string& contents,
                                 unsigned mode) {
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());  // a leftover of a crash, or a planted link: never written through
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  static_cast<mode_t>(mode));
  if (fd < 0) return fail(errnoError(errno, "cannot create " + tmp));
  int err = 0;
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return fail(errnoError(err, "cannot write " + path));
  }
  int dir = ::open(parentOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    // The file is in place; a directory that cannot be synced only weakens the crash guarantee.
    (void)::fsync(dir);
    ::close(dir);
  }
  return {};
}

Result<void> PosixStateFiles::makeDirectory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return fail(ErrorCode::kIo, "cannot create " + path + ": " + ec.message());
  return {};
}

Result<std::optional<std::string>> readSmallFile(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return fail(errnoError(errno, "cannot open " + path));
  }
  auto got = readAllAtMost(fd, path, max_bytes);
  if (!got) return fail(got.error());
  if (!*got) {
    return fail(ErrorCode::kInvalidArgument,
                path + " is larger than " + std::to_string(max_bytes) + " bytes");
  }
  return std::move(*got);
}

Result<std::optional<std::string>> PosixStateFiles::read(const std::string& path) const {
  return readSmallFile(path, kMaxStateFile);
}

Result<void> PosixStateFiles::remove(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return fail(errnoError(errno, "cannot remove " + path));
  }
  return {};
}

bool PosixStateFiles::exists(const std::string& path) const {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace tandem
