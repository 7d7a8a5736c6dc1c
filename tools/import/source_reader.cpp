#include "source_reader.h"

#include <glob.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tandem::importer {

namespace {
constexpr std::streamoff kMaxSource = 4 << 20;
}

Result<std::string> PosixSourceReader::read(const std::string& path) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorCode::kNotFound, path + ": cannot open: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size > kMaxSource) {
    return fail(ErrorCode::kInvalidArgument,
                path + ": larger than 4 MiB; is this really a config file?");
  }
  in.seekg(0);
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return fail(ErrorCode::kIo, path + ": read failed");
  return s.str();
}

std::vector<std::string> PosixSourceReader::glob(const std::string& pattern) const {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  return out;
}

}  // namespace tandem::importer
