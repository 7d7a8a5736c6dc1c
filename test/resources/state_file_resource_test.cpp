#include "core/state_file_resource.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
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
  std::string dir_, path_;
};

Result<void> run(void (Resource::*op)(Done), Resource& r) {
  Result<void> out = fail(ErrorCode::kInternal, "not answered");
  (r.*op)([&out](Result<void> x) { out = x; });
  return out;
}

TEST_F(StateFileTest, StartWritesTheNodeAndStopRemovesIt) {
  StateFileResource r(path_, "lb1");
  EXPECT_FALSE(r.present());
  ASSERT_TRUE(run(&Resource::start, r));
  EXPECT_TRUE(r.present());
  EXPECT_EQ(read(), "lb1");
  ASSERT_TRUE(run(&Resource::stop, r));
  EXPECT_FALSE(r.present());
  EXPECT_TRUE(run(&Resource::stop, r)) << "stopping what is gone succeeds";
}

TEST_F(StateFileTest, MonitorRestoresAFileRemovedBehindItsBack) {
  StateFileResource r(path_, "lb1");
  ASSERT_TRUE(run(&Resource::start, r));
  ::unlink(path_.c_str());
  ASSERT_TRUE(run(&Resource::monitor, r));
  EXPECT_EQ(read(), "lb1");
}

TEST_F(StateFileTest, AnUnwritableDirectoryIsAnErrorThatNamesThePath) {
  StateFileResource r("/nonexistent-dir/holder", "lb1");
  Result<void> res = run(&Resource::start, r);
  ASSERT_FALSE(res);
  EXPECT_NE(res.error().message.find("/nonexistent-dir/holder"), std::string::npos);
}

}  // namespace
}  // namespace tandem::resources
