// PosixFileSystem::readSecret on real files (issue 12): the cluster key is opened once with
// O_NOFOLLOW and everything is checked on that descriptor: a symbolic link, a file another user
// owns, one that its group or others may read, a FIFO and a file of the wrong size are each
// refused with the path and what to do.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/file_system.h"
#include "fakes/temp_dir.h"

namespace tandem::config {
namespace {

namespace fs = std::filesystem;

class SecretFile : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }
  std::string file(const std::string& name, const std::string& contents, mode_t mode) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << contents;
    EXPECT_EQ(::chmod(p.c_str(), mode), 0);
    return p;
  }
  Result<std::string> read(const std::string& p) const { return posix_.readSecret(p, 16, 4096); }

  fakes::TempDir tmp_{"tandem-secret-test"};
  fs::path dir_ = tmp_.path();
  PosixFileSystem posix_;
};

TEST_F(SecretFile, AKeyOnlyItsOwnerMayReadIsRead) {
  const std::string key(32, 'k');
  auto r = read(file("authkey", key, 0600));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, key);
}

TEST_F(SecretFile, ASymbolicLinkIsRefusedNotFollowed) {
  const std::string target = file("real", std::string(32, 'k'), 0600);
  const std::string link = (dir_ / "authkey").string();
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  auto r = read(link);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "the key file " + link +
                                   " is a symbolic link, which tandem does not follow; point "
                                   "file at the key itself");
  // The default (stat, then read), as the fakes use it, refuses it too.
  EXPECT_TRUE(posix_.stat(link)->symlink);
  EXPECT_FALSE(posix_.stat(target)->symlink);
}

TEST_F(SecretFile, AKeyItsGroupMayReadIsRefused) {
  const std::string p = file("authkey", std::string(32, 'k'), 0640);
  auto r = read(p);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(r.error().message, "the key file " + p +
                                   " has mode 0640, so its group or others have access; run "
                                   "`chmod 0600 " +
                                   p + "`");
}

TEST_F(SecretFile, AKeyAnotherUserOwnsIsRefused) {
  if (::geteuid() != 0) {
    if (std::getenv("TANDEM_TEST_NO_SKIP")) FAIL() << "needs root to chown the file";
    GTEST_SKIP() << "SKIPPED: needs root to give the file to another user";
  }
  const std::string p = file("authkey", std::string(32, 'k'), 0600);
  ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0);
  auto r = read(p);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(r.error().message,
            "the key file " + p +
                " is owned by uid 65534, not by uid 0 that reads it, so another user could have "
                "written it; run `chown 0 " +
                p + "`");
}

TEST_F(SecretFile, AFifoIsRefusedWithoutBlocking) {
  const std::string p = (dir_ / "authkey").string();
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  auto r = read(p);  // would block in open() without O_NONBLOCK: no writer ever comes
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("is not a regular file"), std::string::npos)
      << r.error().message;
}

TEST_F(SecretFile, AKeyOfTheWrongSizeIsRefused) {
  const std::string p = file("authkey", std::string(8, 'k'), 0600);
  auto r = read(p);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "the key file " + p +
                                   " has 8 bytes; a key has 16 to 4096 bytes, write a new one "
                                   "with `tandem keygen " +
                                   p + "`");
  EXPECT_FALSE(read(file("big", std::string(5000, 'k'), 0600)));
}

TEST_F(SecretFile, AMissingKeyNamesThePath) {
  const std::string p = (dir_ / "none").string();
  auto r = read(p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(p), std::string::npos);
}

}  // namespace
}  // namespace tandem::config
