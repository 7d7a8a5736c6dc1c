// The listener beside the backup daemon (sync_tap.h) on the real kernel, in a private network
// namespace this process creates: veth st0/st1, 198.51.100.0/24 and 2001:db8::/32 only. A
// socket made the way the kernel makes its backup's (SO_REUSEADDR, bound to the group and port,
// tied to the interface, joined to the group) stands for the backup daemon: the host kernel may
// have no IPVS, and the claim under test is the socket layer's, that both sockets get every
// datagram. The VM's sync_sessions test shows the same beside the real backup daemon. Needs
// root: otherwise SKIPPED and success, unless TANDEM_TEST_NO_SKIP=1.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "loop/qb_dispatcher.h"
#include "must_run.h"
#include "resources/fake_sync_tap.h"
#include "sync/sync_tap.h"

namespace tandem::resources::sync {
namespace {

using namespace std::chrono_literals;

int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

// A socket like the kernel's backup receive socket (ip_vs_sync.c, make_receive_sock).
int backupLikeSocket(const IpAddress& group, uint16_t port, const char* ifname) {
  const bool v6 = group.family == Family::kInet6;
  int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  ::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, static_cast<socklen_t>(strlen(ifname)));
  const unsigned ifindex = ::if_nametoindex(ifname);
  if (v6) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(port);
    std::memcpy(&sa.sin6_addr, group.bytes.data(), 16);
    sa.sin6_scope_id = ifindex;
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0) << strerror(errno);
    ipv6_mreq m{};
    std::memcpy(&m.ipv6mr_multiaddr, group.bytes.data(), 16);
    m.ipv6mr_interface = ifindex;
    EXPECT_EQ(::setsockopt(fd, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &m, sizeof m), 0);
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    std::memcpy(&sa.sin_addr, group.bytes.data(), 4);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0) << strerror(errno);
    ip_mreqn m{};
    std::memcpy(&m.imr_multiaddr, group.bytes.data(), 4);
    m.imr_ifindex = static_cast<int>(ifindex);
    EXPECT_EQ(::setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m), 0);
  }
  return fd;
}

// Sends one datagram to group:port out of st0, as the master on the other director would.
void sendFromMaster(const IpAddress& group, uint16_t port, const std::vector<uint8_t>& bytes) {
  const bool v6 = group.family == Family::kInet6;
  int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "st0", 3), 0) << strerror(errno);
  const unsigned ifindex = ::if_nametoindex("st0");
  ssize_t sent = -1;
  if (v6) {
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof ifindex);
    sockaddr_in6 to{};
    to.sin6_family = AF_INET6;
    to.sin6_port = htons(port);
    std::memcpy(&to.sin6_addr, group.bytes.data(), 16);
    to.sin6_scope_id = ifindex;
    sent = ::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  } else {
    ip_mreqn via{};
    via.imr_ifindex = static_cast<int>(ifindex);
    ::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &via, sizeof via);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    std::memcpy(&to.sin_addr, group.bytes.data(), 4);
    sent = ::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  }
  EXPECT_EQ(sent, static_cast<ssize_t>(bytes.size())) << strerror(errno);
  ::close(fd);
}

// What the backup-like socket received within 2 s, if anything.
std::optional<std::vector<uint8_t>> received(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 2000) != 1) return std::nullopt;
  std::vector<uint8_t> buf(65536);
  const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
  if (n < 0) return std::nullopt;
  buf.resize(static_cast<size_t>(n));
  return buf;
}

struct Heard {
  std::vector<uint8_t> bytes;
  IpAddress from;
};

// Opens the tap for a backup daemon on st1, sends `bytes` from st0, and runs the loop until the
// tap reports it or 2 s pass. The backup-like socket must get the same datagram.
void hearsBesideTheBackup(ipvs::SyncDaemon backup, const char* from) {
  auto dispatcher = loop::QbDispatcher::create();
  ASSERT_TRUE(dispatcher) << dispatcher.error().message;
  loop::Dispatcher& d = **dispatcher;
  const IpAddress group = syncGroupOf(backup);
  const uint16_t port = syncPortOf(backup);
  const int kernel_like = backupLikeSocket(group, port, "st1");
  std::vector<Heard> heard;
  auto tap = openLinuxSyncTap(d, backup, [&](std::span<const uint8_t> bytes, const IpAddress& f) {
    heard.push_back(Heard{{bytes.begin(), bytes.end()}, f});
    d.stop();
  });
  ASSERT_TRUE(tap) << tap.error().message;
  const auto message = fakes::syncMessageV1(7, 3, 64);
  sendFromMaster(group, port, message);
  auto give_up = d.createTimer([&d] { d.stop(); });
  give_up->arm(2000ms);
  d.run();
  ASSERT_EQ(heard.size(), 1u) << "the tap heard nothing on " << ipvs::hostPort(group, port);
  EXPECT_EQ(heard[0].bytes, message);
  EXPECT_EQ(heard[0].from.toString(), from);
  auto got = received(kernel_like);
  ASSERT_TRUE(got) << "the backup's socket lost the datagram to the tap";
  EXPECT_EQ(*got, message);
  // Closed, the tap leaves the group to the backup, which still hears.
  tap->reset();
  sendFromMaster(group, port, message);
  EXPECT_TRUE(received(kernel_like)) << "the backup stopped hearing when the tap closed";
  ::close(kernel_like);
}

TEST(SyncTapKernel, HearsTheKernelsDefaultGroupBesideTheBackupAndTakesNothing) {
  ipvs::SyncDaemon backup;
  backup.interface = "st1";
  backup.sync_id = 7;  // group and port unset: 224.0.0.81:8848, as the kernel
  hearsBesideTheBackup(backup, "198.51.100.1");
}

TEST(SyncTapKernel, HearsAnIpv6GroupOnItsPort) {
  ipvs::SyncDaemon backup;
  backup.interface = "st1";
  backup.group = *IpAddress::parse("ff02::1:3");
  backup.port = 8850;
  hearsBesideTheBackup(backup, "fe80::5:1");
}

TEST(SyncTapKernel, AnInterfaceThatDoesNotExistIsNamed) {
  auto dispatcher = loop::QbDispatcher::create();
  ASSERT_TRUE(dispatcher);
  ipvs::SyncDaemon backup;
  backup.interface = "nosuch0";
  auto tap =
      openLinuxSyncTap(**dispatcher, backup, [](std::span<const uint8_t>, const IpAddress&) {});
  ASSERT_FALSE(tap);
  EXPECT_NE(tap.error().message.find(
                "cannot listen beside the sync backup daemon on nosuch0 (224.0.0.81:8848): no "
                "such interface"),
            std::string::npos)
      << tap.error().message;
}

}  // namespace
}  // namespace tandem::resources::sync

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  using tandem::test::cannotRun;
  const std::string why = tandem::test::enterPrivateNetns("a private network namespace, veth");
  if (!why.empty()) return cannotRun(why);
  // From here on nothing touches the host's network: the namespace dies with this process.
  using tandem::resources::sync::sh;
  if (sh("ip link set lo up && ip link add st0 type veth peer name st1 && "
         "ip link set st0 addr 02:00:00:00:05:01 && ip link set st1 addr 02:00:00:00:05:02 && "
         "ip link set st0 addrgenmode none && ip link set st1 addrgenmode none && "
         // Both ends are in this one namespace: st1 must take a datagram whose source is local.
         "sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.st1.rp_filter=0 "
         "net.ipv4.conf.st1.accept_local=1 && "
         "ip addr add 198.51.100.1/24 dev st0 && ip addr add 198.51.100.2/24 dev st1 && "
         "ip addr add fe80::5:1/64 dev st0 nodad && ip addr add fe80::5:2/64 dev st1 nodad && "
         "ip link set st0 up && ip link set st1 up") != 0) {
    return cannotRun("cannot create a veth pair with ip(8)");
  }
  // A veth's carrier comes up a moment after `ip link set up`: a datagram sent before is lost
  // (1 run in 24 heard nothing). Wait for both ends' LOWER_UP, 5 s at most.
  for (int i = 0; i < 250; ++i) {
    if (sh("ip -o link show st0 | grep -q LOWER_UP && ip -o link show st1 | grep -q LOWER_UP") ==
        0) {
      return RUN_ALL_TESTS();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cannotRun("the veth pair's carrier did not come up within 5 s");
}
