#pragma once

// What the golden-file tests of the CLI share: reading a file whole, and comparing a text with
// its golden file (or, with TANDEM_UPDATE_GOLDEN=1 in the environment, rewriting the file, to
// accept a deliberate change; review the diff).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tandem::cli::testing {

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void expectGoldenText(const std::string& got, const std::filesystem::path& golden_file) {
  if (std::getenv("TANDEM_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden_file, std::ios::binary) << got;
    return;
  }
  EXPECT_EQ(got, readFile(golden_file)) << "golden file " << golden_file;
}

}  // namespace tandem::cli::testing
