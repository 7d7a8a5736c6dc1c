#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common/state_files.h"

namespace tandem::cli {

namespace {

constexpr size_t kKeyBytes = 32;  // HMAC-SHA256 wants at least its block's worth of entropy

// --force: the new key goes to a temporary beside the old one and is renamed over it, so the
// live key is never truncated: a tandemd that reads it meanwhile (a reload) gets the old key
// or the new one whole, and a failed write leaves the old one in place.
bool replaceKey(const std::string& path, std::string& key) {
  auto written = writeFileAtomically(path, key, 0600);
  OPENSSL_cleanse(key.data(), key.size());
  if (!written) {
    std::cerr << "tandem keygen: " << written.error().message << "; the old key is unchanged\n";
    return false;
  }
  return true;
}

// Without --force: O_EXCL, since overwriting a live key splits the cluster until every node has
// the new one.
bool createKey(const std::string& path, std::string& key) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    int err = errno;
    OPENSSL_cleanse(key.data(), key.size());
    std::cerr << "tandem keygen: cannot create " << path << ": " << std::strerror(err)
              << (err == EEXIST ? " (pass --force to replace it)" : "") << "\n";
    return false;
  }
  bool ok = ::fchmod(fd, 0600) == 0 &&
            ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size());
  ok = (::fsync(fd) == 0) && ok;
  ::close(fd);
  OPENSSL_cleanse(key.data(), key.size());
  if (!ok) {
    std::cerr << "tandem keygen: writing " << path << " failed; remove it and try again\n";
  }
  return ok;
}

int keygen(const std::string& path, bool force, const GlobalOptions& global) {
  std::string key(kKeyBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    OPENSSL_cleanse(key.data(), key.size());
    std::cerr << "tandem keygen: the OpenSSL random generator failed; nothing was written\n";
    return kExitFailed;
  }
  if (!(force ? replaceKey(path, key) : createKey(path, key))) return kExitFailed;
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
