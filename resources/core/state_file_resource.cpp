#include "core/state_file_resource.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace tandem::resources {

Result<void> writeFileAtomically(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail(errnoError(errno, "cannot create " + tmp));
  ssize_t n = ::write(fd, contents.data(), contents.size());
  int err = errno;
  bool ok = n == static_cast<ssize_t>(contents.size());
  if (::fsync(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) err = errno;
    ::unlink(tmp.c_str());
    return fail(errnoError(err, "cannot write " + path));
  }
  return Result<void>();
}

StateFileResource::StateFileResource(std::string path, std::string node)
    : path_(std::move(path)), node_(std::move(node)) {}

void StateFileResource::start(Done done) { done(writeFileAtomically(path_, node_ + "\n")); }

void StateFileResource::stop(Done done) {
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
    done(fail(errnoError(errno, "cannot remove " + path_)));
    return;
  }
  done(Result<void>());
}

void StateFileResource::monitor(Done done) {
  if (present()) {
    done(Result<void>());
    return;
  }
  // Removed behind our back: put it back, as a VIP's monitor would.
  done(writeFileAtomically(path_, node_ + "\n"));
}

bool StateFileResource::present() const {
  struct stat st {};
  return ::stat(path_.c_str(), &st) == 0;
}

}  // namespace tandem::resources
