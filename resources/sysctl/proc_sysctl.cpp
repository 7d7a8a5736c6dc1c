#include "sysctl/proc_sysctl.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace tandem::resources::sysctl {

namespace {

std::string trim(std::string s) {
  const char* ws = " \t\r\n";
  auto last = s.find_last_not_of(ws);
  if (last == std::string::npos) return {};
  return s.substr(s.find_first_not_of(ws), last - s.find_first_not_of(ws) + 1);
}

Error fileError(int err, std::string_view verb, std::string_view key, const std::string& path) {
  Error e = errnoError(err, std::string(verb) + " " + std::string(key) + " (" + path + ")");
  if (err == ENOENT) e.code = ErrorCode::kNotFound;
  return e;
}

}  // namespace

Result<std::string> ProcSysctl::read(std::string_view key) const {
  std::string path = root_ + "/" + procPath(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(fileError(errno, "cannot read", key, path));
  std::string out;
  std::array<char, 256> buf{};
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return fail(fileError(err, "cannot read", key, path));
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return trim(std::move(out));
}

Result<void> ProcSysctl::write(std::string_view key, std::string_view value) {
  std::string path = root_ + "/" + procPath(key);
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fail(fileError(errno, "cannot write", key, path));
  // A sysctl takes the whole value in one write; a short write would set a prefix of it.
  std::string line = std::string(value) + "\n";
  ssize_t n = 0;
  do {
    n = ::write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  int err = errno;
  ::close(fd);
  if (n < 0) return fail(fileError(err, "cannot write", key, path));
  if (static_cast<size_t>(n) != line.size()) {
    return fail(ErrorCode::kIo, "short write to " + path);
  }
  return {};
}

}  // namespace tandem::resources::sysctl
