// Who holds an abstract socket name: on a fake /proc tree (the parsing), and on the real one
// with a socket this test binds (the kernel's format, read as it is).
#include "ipc/socket_holders.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tandem::ipc {
namespace {

namespace fs = std::filesystem;

class FakeProc {
 public:
  FakeProc() : root_(fs::temp_directory_path() / ("socket-holders-" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
    fs::create_directories(root_ / "net");
  }
  ~FakeProc() { fs::remove_all(root_); }

  void unixTable(const std::string& rows) {
    std::ofstream(root_ / "net" / "unix")
        << "Num       RefCount Protocol Flags    Type St Inode Path\n"
        << rows;
  }
  void process(int pid, int uid, const std::string& comm, const std::vector<std::string>& fds) {
    fs::path dir = root_ / std::to_string(pid);
    fs::create_directories(dir / "fd");
    std::ofstream(dir / "status") << "Name:\t" << comm << "\nUid:\t" << uid << "\t" << uid << "\t"
                                  << uid << "\t" << uid << "\n";
    std::ofstream(dir / "comm") << comm << "\n";
    int n = 0;
    for (const auto& target : fds) fs::create_symlink(target, dir / "fd" / std::to_string(n++));
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(SocketHolders, FindsTheProcessesListeningOnTheName) {
  FakeProc proc;
  proc.unixTable(
      "0000000000000000: 00000002 00000000 00010000 0001 01 4001 @tandem@@@@\n"  // libqb's
      "0000000000000000: 00000003 00000000 00000000 0001 03 4002 @tandem\n"      // a connection
      "0000000000000000: 00000002 00000000 00010000 0001 01 4003 @tandem-2\n"    // another name
      "0000000000000000: 00000002 00000000 00010000 0001 01 4005 @tandem\n"      // unpadded
      "0000000000000000: 00000002 00000000 00000000 0002 01 4004\n");            // unnamed
  proc.process(300, 1000, "squat", {"pipe:[1]", "socket:[4001]", "socket:[4001]"});
  proc.process(301, 0, "tandemd", {"socket:[4003]", "socket:[4002]"});
  proc.process(302, 0, "other", {"/dev/null"});
  proc.process(303, 7, "exact", {"socket:[4005]"});
  std::vector<SocketHolder> holders = abstractSocketHolders("tandem", proc.root());
  std::sort(holders.begin(), holders.end(),
            [](const SocketHolder& a, const SocketHolder& b) { return a.pid < b.pid; });
  ASSERT_EQ(holders.size(), 2u);
  EXPECT_EQ(holders[0].pid, 300);
  EXPECT_EQ(holders[0].uid, 1000u);
  EXPECT_EQ(holders[0].comm, "squat");
  EXPECT_EQ(holders[1].pid, 303);
  EXPECT_EQ(describeHolders(holders), "pid 300 (squat, uid 1000), pid 303 (exact, uid 7)");
}

TEST(SocketHolders, NothingWhenNobodyListensOrProcIsUnreadable) {
  FakeProc proc;
  proc.unixTable("0000000000000000: 00000003 00000000 00000000 0001 03 4002 @tandem\n");
  proc.process(300, 0, "client", {"socket:[4002]"});
  EXPECT_TRUE(abstractSocketHolders("tandem", proc.root()).empty());
  EXPECT_TRUE(abstractSocketHolders("tandem", proc.root() + "/absent").empty());
  EXPECT_EQ(describeHolders({}), "");
}

TEST(SocketHolders, FindsThisTestOnTheRealProc) {
  std::string name = "tandem-holders-test-" + std::to_string(::getpid());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  EXPECT_TRUE(abstractSocketHolders(name).empty()) << "bound but not listening yet";
  ASSERT_EQ(::listen(fd, 1), 0);
  std::vector<SocketHolder> holders = abstractSocketHolders(name);
  ::close(fd);
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].pid, ::getpid());
  EXPECT_EQ(holders[0].uid, ::getuid());
}

}  // namespace
}  // namespace tandem::ipc
