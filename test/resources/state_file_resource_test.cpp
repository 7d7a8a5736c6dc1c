#include "core/state_file_resource.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace tandem::resources {
namespace {

class StateFileTest : public ::testing::Test {
 protected:
  StateFileTest() {
    char tmpl[] = "/tmp/tandem-state-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/holder";
  }
  ~StateFileTest() override {
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  std::string read() {
    std::ifstream in(path_);
    std::string s;
    std::getline(in, s);
    return s;
  }
  PosixStateFiles files_;
  std::string dir_, path_;
};

Result<void> run(void (Resource::*op)(Done), Resource& r) {
  Result<void> out = fail(ErrorCode::kInternal, "not answered");
  (r.*op)([&out](Result<void> x) { out = x; });
  return out;
}

TEST_F(StateFileTest, StartWritesTheNodeAndStopRemovesIt) {
  StateFileResource r(files_, path_, "lb1");
  EXPECT_FALSE(r.present());
  ASSERT_TRUE(run(&Resource::start, r));
  EXPECT_TRUE(r.present());
  EXPECT_EQ(read(), "lb1");
  ASSERT_TRUE(run(&Resource::stop, r));
  EXPECT_FALSE(r.present());
  EXPECT_TRUE(run(&Resource::stop, r)) << "stopping what is gone succeeds";
}

TEST_F(StateFileTest, MonitorRestoresAFileRemovedBehindItsBack) {
  StateFileResource r(files_, path_, "lb1");
  ASSERT_TRUE(run(&Resource::start, r));
  ::unlink(path_.c_str());
  ASSERT_TRUE(run(&Resource::monitor, r));
  EXPECT_EQ(read(), "lb1");
}

TEST_F(StateFileTest, AnUnwritableDirectoryIsAnErrorThatNamesThePath) {
  StateFileResource r(files_, "/nonexistent-dir/holder", "lb1");
  Result<void> res = run(&Resource::start, r);
  ASSERT_FALSE(res);
  EXPECT_NE(res.error().message.find("/nonexistent-dir/holder"), std::string::npos);
}

}  // namespace
}  // namespace tandem::resources

namespace tandem {
namespace {

class AtomicWriteTest : public ::testing::Test {
 protected:
  AtomicWriteTest() {
    char tmpl[] = "/tmp/tandem-atomic-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~AtomicWriteTest() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(AtomicWriteTest, ReplacesTheWholeFileAndLeavesNoTemporary) {
  const std::string path = dir_ + "/role";
  ASSERT_TRUE(writeFileAtomically(path, "ACTIVE 7\n"));
  ASSERT_TRUE(writeFileAtomically(path, "BACKUP 8\n"));
  PosixStateFiles files;
  auto read = files.read(path);
  ASSERT_TRUE(read && *read);
  EXPECT_EQ(**read, "BACKUP 8\n");
  EXPECT_FALSE(files.exists(path + ".tmp"));
}

TEST_F(AtomicWriteTest, APlantedLinkAtTheTemporaryIsNotWrittenThrough) {
  const std::string path = dir_ + "/role";
  const std::string victim = dir_ + "/victim";
  { std::ofstream(victim) << "precious"; }
  ASSERT_EQ(::symlink(victim.c_str(), (path + ".tmp").c_str()), 0);
  ASSERT_TRUE(writeFileAtomically(path, "ACTIVE 1\n"));
  std::ifstream in(victim);
  std::string s;
  std::getline(in, s);
  EXPECT_EQ(s, "precious");
}

TEST_F(AtomicWriteTest, ReadingAMissingFileIsNotAnError) {
  PosixStateFiles files;
  auto read = files.read(dir_ + "/absent");
  ASSERT_TRUE(read);
  EXPECT_FALSE(*read);
  EXPECT_TRUE(files.remove(dir_ + "/absent"));
  ASSERT_TRUE(files.makeDirectory(dir_ + "/a/b"));
  EXPECT_TRUE(files.exists(dir_ + "/a/b"));
}

}  // namespace
}  // namespace tandem
