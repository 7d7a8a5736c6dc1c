// config_known_keys FILE...: loads each config with a file system on which every key file is
// fine, and prints the union of the keys the loader asked for ("cluster.heartbeat_interval",
// "virtual_server.real_server.check.path", ...), one per line, sorted. The reference test
// compares that list with the keys conf/reference.md documents.
//
// Exits 1 if a file cannot be read or has an error (then its key list would be incomplete);
// warnings are printed and allowed.
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "config/config_loader.h"

namespace {

using tandem::config::FileInfo;
using tandem::config::FileSystem;

// Every path is a key file as `tandem keygen` writes it (regular, 32 bytes, nothing for group or
// others), and executable too, so that a check's program exists.
class AllKeysExist final : public FileSystem {
 public:
  std::optional<FileInfo> stat(const std::string&) const override {
    return FileInfo{true, 0700, 32};
  }
  tandem::Result<std::string> readFile(const std::string& path, size_t) const override {
    return tandem::fail(tandem::ErrorCode::kInvalidArgument,
                        "config_known_keys does not read " + path + " through the fake");
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: config_known_keys FILE...\n";
    return 2;
  }
  AllKeysExist files;
  std::set<std::string> keys;
  int bad = 0;
  for (int i = 1; i < argc; ++i) {
    std::string path = argv[i];
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << path << ": cannot open\n";
      ++bad;
      continue;
    }
    std::ostringstream text;
    text << in.rdbuf();
    tandem::config::LoadResult r = tandem::config::loadConfigText(text.str(), path, files);
    std::cerr << r.diagnostics.formatAll();
    if (!r.ok()) {
      std::cerr << path << ": " << r.diagnostics.errorCount()
                << " error(s); fix the file so that its keys can be listed\n";
      ++bad;
    }
    keys.insert(r.known_keys.begin(), r.known_keys.end());
  }
  for (const auto& k : keys) std::cout << k << "\n";
  return bad == 0 ? 0 : 1;
}
