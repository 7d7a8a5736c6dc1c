// `tandem keygen` end to end (the real binary, real files in a temporary directory): a new key
// is 32 random bytes, mode 0600; an existing file is never overwritten without --force; with
// --force the key is replaced by a rename, so the live key is never truncated (issue 12).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "cli_harness.h"
#include "fakes/temp_dir.h"

namespace tandem::cli::testing {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class Keygen : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }
  Outcome keygen(bool force) {
    std::vector<std::string> argv{TANDEM_PATH, "keygen", key_.string()};
    if (force) argv.push_back("--force");
    return run(argv);
  }
  fakes::TempDir tmp_{"tandem-keygen-test"};
  fs::path key_ = tmp_.path() / "authkey";
};

TEST_F(Keygen, WritesThirtyTwoBytesOnlyTheOwnerMayRead) {
  Outcome o = keygen(false);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  struct stat st {};
  ASSERT_EQ(::stat(key_.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 32);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(Keygen, AnExistingKeyIsKeptWithoutForce) {
  ASSERT_EQ(keygen(false).exit_code, 0);
  const std::string before = slurp(key_);
  Outcome o = keygen(false);
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("pass --force to replace it"), std::string::npos) << o.err;
  EXPECT_EQ(slurp(key_), before);
}

// A tandemd that holds the old key open (or reads it during the replacement) sees the old key
// whole: --force renames a new file over it instead of truncating it in place.
TEST_F(Keygen, ForceReplacesTheKeyWithoutTruncatingTheLiveOne) {
  ASSERT_EQ(keygen(false).exit_code, 0);
  const std::string old_key = slurp(key_);
  std::ifstream live(key_, std::ios::binary);  // opened before the replacement
  ASSERT_TRUE(live.is_open());
  struct stat before {};
  ASSERT_EQ(::stat(key_.c_str(), &before), 0);

  Outcome o = keygen(true);
  ASSERT_EQ(o.exit_code, 0) << o.err;

  const std::string through_old_fd(std::istreambuf_iterator<char>(live), {});
  EXPECT_EQ(through_old_fd, old_key) << "the live key was truncated or rewritten in place";
  const std::string new_key = slurp(key_);
  EXPECT_EQ(new_key.size(), 32u);
  EXPECT_NE(new_key, old_key);
  struct stat after {};
  ASSERT_EQ(::stat(key_.c_str(), &after), 0);
  EXPECT_NE(after.st_ino, before.st_ino) << "a new file took the name";
  EXPECT_EQ(after.st_mode & 07777, 0600u);
  EXPECT_FALSE(fs::exists(key_.string() + ".tmp")) << "no temporary left behind";
}

}  // namespace
}  // namespace tandem::cli::testing
