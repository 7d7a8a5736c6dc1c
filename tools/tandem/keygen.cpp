#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"

namespace tandem::cli {

namespace {

constexpr size_t kKeyBytes = 32;  // HMAC-SHA256 wants at least its block's worth of entropy

int keygen(const std::string& path, bool force, const GlobalOptions& global) {
  unsigned char key[kKeyBytes];
  if (RAND_bytes(key, sizeof key) != 1) {
    std::cerr << "tandem keygen: the OpenSSL random generator failed; nothing was written\n";
    return kExitFailed;
  }
  // O_EXCL unless --force: overwriting a live key splits the cluster until every node has it.
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (force ? O_TRUNC : O_EXCL);
  int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) {
    int err = errno;
    std::cerr << "tandem keygen: cannot create " << path << ": " << std::strerror(err)
              << (err == EEXIST ? " (pass --force to replace it)" : "") << "\n";
    return kExitFailed;
  }
  bool ok =
      ::fchmod(fd, 0600) == 0 && ::write(fd, key, sizeof key) == static_cast<ssize_t>(sizeof key);
  ok = (::fsync(fd) == 0) && ok;
  ::close(fd);
  OPENSSL_cleanse(key, sizeof key);
  if (!ok) {
    std::cerr << "tandem keygen: writing " << path << " failed; remove it and try again\n";
    return kExitFailed;
  }
  if (global.json) {
    std::cout << nlohmann::json{{"file", path}, {"bytes", kKeyBytes}, {"mode", "0600"}}.dump(2)
              << "\n";
  } else {
    std::cout << "wrote a " << kKeyBytes << "-byte key to " << path
              << " (mode 0600); copy it to every node\n";
  }
  return kExitOk;
}

}  // namespace

void addKeygenCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* k = app.add_subcommand("keygen", "write a new cluster authentication key (mode 0600)");
  auto path = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  k->add_option("file", *path, "where to write the key")->required();
  k->add_flag("--force", *force, "replace an existing file");
  k->callback([path, force, &global, exit_code] { *exit_code = keygen(*path, *force, global); });
}

}  // namespace tandem::cli
