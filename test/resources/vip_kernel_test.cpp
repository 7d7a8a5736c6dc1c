// VipResource over real rtnetlink, in a private network namespace this process creates
// (unshare(CLONE_NEWNET)): veth vt0/vt1, addresses from 198.51.100.0/24 and 2001:db8::/32 only.
// `ip -j addr` is the independent reader, and a netlink socket subscribed to the address
// groups sees every RTM_NEWADDR/RTM_DELADDR the kernel announces, so "no flap" is observed, not
// assumed. Needs root: otherwise it prints SKIPPED and succeeds, unless TANDEM_TEST_NO_SKIP=1.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "fakes/sim_dispatcher.h"
#include "must_run.h"
#include "vip/netlink_address_table.h"
#include "vip/vip_resource.h"

namespace tandem::resources {
namespace {

using test::sh;

struct SeenAddress {
  std::string local;
  int prefixlen = 0;
  std::string label;
  bool nodad = false;
};

// What `ip -j addr show dev IF` lists.
std::vector<SeenAddress> ipAddr(const std::string& ifname) {
  std::vector<SeenAddress> out;
  auto j = nlohmann::json::parse(sh("ip -j addr show dev " + ifname), nullptr, false);
  if (j.is_discarded() || !j.is_array() || j.empty()) return out;
  for (const auto& a : j[0].value("addr_info", nlohmann::json::array())) {
    if (a.value("scope", "") != "global") continue;
    out.push_back(SeenAddress{a.value("local", ""), a.value("prefixlen", 0), a.value("label", ""),
                              a.value("nodad", false)});
  }
  return out;
}

const SeenAddress* findSeen(const std::vector<SeenAddress>& v, const std::string& local) {
  for (const auto& a : v) {
    if (a.local == local) return &a;
  }
  return nullptr;
}

// Counts the kernel's address notifications (RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR).
class AddressEvents {
 public:
  AddressEvents() {
    fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    sa.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0;
  }
  ~AddressEvents() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return ok_; }
  // One notification: RTM_NEWADDR or RTM_DELADDR, and its address ("198.51.100.50/24").
  struct Event {
    uint16_t type = 0;
    std::string prefix;
  };
  // Reads what is queued (the kernel queues notifications before the request returns).
  std::vector<Event> read() {
    std::vector<Event> out;
    std::array<uint32_t, 8192> buf{};
    for (;;) {
      ssize_t n = ::recv(fd_, buf.data(), sizeof(buf), 0);
      if (n <= 0) break;
      const auto* bytes = reinterpret_cast<const uint8_t*>(buf.data());
      for (size_t at = 0; at + sizeof(nlmsghdr) <= size_t(n);) {
        nlmsghdr h{};
        std::memcpy(&h, bytes + at, sizeof h);
        if (h.nlmsg_len < sizeof h || at + h.nlmsg_len > size_t(n)) break;
        if (h.nlmsg_type == RTM_NEWADDR || h.nlmsg_type == RTM_DELADDR) {
          auto msgs = rtnl::decode(std::span<const uint8_t>(bytes + at, h.nlmsg_len));
          const bool decoded = msgs && msgs->size() == 1;
          out.push_back({h.nlmsg_type, decoded ? (*msgs)[0].address.prefix.toString() : "?"});
        }
        at += NLMSG_ALIGN(h.nlmsg_len);
      }
    }
    return out;
  }
  // The VIP's additions and removals among what is queued, and every event read, for a message.
  // Only the VIP's: the kernel announces the veth pair's own link-local addresses too, a second
  // or so after the links come up, and on a loaded machine that can fall inside a test.
  struct Counted {
    int added = 0;
    int removed = 0;
    std::string all;
  };
  Counted drain(const std::vector<std::string>& vips) {
    Counted c;
    for (const Event& e : read()) {
      c.all += std::string(e.type == RTM_NEWADDR ? "new " : "del ") + e.prefix + "; ";
      if (std::find(vips.begin(), vips.end(), e.prefix) == vips.end()) continue;
      c.added += e.type == RTM_NEWADDR;
      c.removed += e.type == RTM_DELADDR;
    }
    return c;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

config::Vip vip(const char* prefix, const char* ifname, const char* label = "") {
  config::Vip v;
  v.address = *IpPrefix::parse(prefix);
  v.interface = ifname;
  v.label = label;
  return v;
}

Result<void> run(void (Resource::*op)(Done), Resource& r) {
  std::optional<Result<void>> got;
  (r.*op)([&](Result<void> res) { got = std::move(res); });
  return got ? *got : Result<void>(fail(ErrorCode::kInternal, "done not called"));
}

class VipKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = NetlinkAddressTable::open(sim_);
    ASSERT_TRUE(t) << t.error().message;
    raw_ = t->get();
    table_ = std::move(*t);
  }
  std::unique_ptr<VipResource> make(config::Vip v) {
    return std::make_unique<VipResource>(
        std::move(v), table_,
        [this](LogLevel, const std::string& line) { lines_.push_back(line); });
  }
  std::string allLines() const {
    std::string s;
    for (const auto& l : lines_) s += l + "\n";
    return s;
  }

  void TearDown() override { table_.reset(); }

  // The table reads its answers at once; the loop only watches its socket.
  fakes::SimDispatcher sim_;
  NetlinkAddressTable* raw_ = nullptr;
  std::shared_ptr<AddressTable> table_;
  std::vector<std::string> lines_;
};

// The tests run in order and share the namespace: add, adopt, restore, stop.
TEST_F(VipKernelTest, AddsIpv4WithLabelAndIpv6Nodad) {
  auto v4 = make(vip("198.51.100.50/24", "vt0", "vt0:web"));
  auto v6 = make(vip("2001:db8::50/64", "vt0"));
  EXPECT_FALSE(v4->present());
  ASSERT_TRUE(run(&Resource::start, *v4)) << allLines();
  auto r6 = run(&Resource::start, *v6);
  ASSERT_TRUE(r6) << r6.error().message;
  EXPECT_TRUE(v4->present());
  EXPECT_TRUE(v6->present());

  auto seen = ipAddr("vt0");
  const SeenAddress* a4 = findSeen(seen, "198.51.100.50");
  ASSERT_NE(a4, nullptr) << sh("ip addr show dev vt0");
  EXPECT_EQ(a4->prefixlen, 24);
  EXPECT_EQ(a4->label, "vt0:web");
  const SeenAddress* a6 = findSeen(seen, "2001:db8::50");
  ASSERT_NE(a6, nullptr) << sh("ip addr show dev vt0");
  EXPECT_EQ(a6->prefixlen, 64);
  EXPECT_TRUE(a6->nodad);
  EXPECT_EQ(raw_->counts().adds, 2u);
}

TEST_F(VipKernelTest, ASecondStartAdoptsWithoutFlapping) {
  // A new table and new resources: what a restarted tandemd has.
  AddressEvents events;
  ASSERT_TRUE(events.ok());
  auto v4 = make(vip("198.51.100.50/24", "vt0", "vt0:web"));
  auto v6 = make(vip("2001:db8::50/64", "vt0"));
  EXPECT_TRUE(v4->present());
  EXPECT_TRUE(v6->present());
  ASSERT_TRUE(run(&Resource::start, *v4));
  ASSERT_TRUE(run(&Resource::start, *v6));
  ASSERT_TRUE(run(&Resource::monitor, *v4));
  ASSERT_TRUE(run(&Resource::monitor, *v6));
  EXPECT_EQ(raw_->counts().adds, 0u);
  EXPECT_EQ(raw_->counts().removes, 0u);
  EXPECT_GT(raw_->counts().dumps, 0u);
  const auto seen = events.drain({"198.51.100.50/24", "2001:db8::50/64"});
  EXPECT_EQ(seen.added, 0) << seen.all;
  EXPECT_EQ(seen.removed, 0) << seen.all;
  EXPECT_NE(allLines().find("VIP 198.51.100.50/24 on vt0 is already in place; adopted it"),
            std::string::npos)
      << allLines();
}

TEST_F(VipKernelTest, MonitorRestoresAnAddressDeletedByHand) {
  auto v4 = make(vip("198.51.100.50/24", "vt0", "vt0:web"));
  ASSERT_TRUE(run(&Resource::start, *v4));
  AddressEvents events;
  ASSERT_TRUE(events.ok());
  int st = 0;
  sh("ip addr del 198.51.100.50/24 dev vt0", &st);
  ASSERT_EQ(st, 0);
  EXPECT_EQ(findSeen(ipAddr("vt0"), "198.51.100.50"), nullptr);
  EXPECT_FALSE(v4->present());

  ASSERT_TRUE(run(&Resource::monitor, *v4));
  const std::vector<SeenAddress> after = ipAddr("vt0");  // findSeen points into it
  const SeenAddress* back = findSeen(after, "198.51.100.50");
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->label, "vt0:web");
  EXPECT_EQ(back->prefixlen, 24);
  EXPECT_NE(
      allLines().find("VIP 198.51.100.50/24 on vt0 was removed behind tandem's back; restored"),
      std::string::npos)
      << allLines();
  const auto seen = events.drain({"198.51.100.50/24"});
  EXPECT_EQ(seen.removed, 1) << seen.all;  // the hand
  EXPECT_EQ(seen.added, 1) << seen.all;    // the monitor
}

TEST_F(VipKernelTest, RefusesAnAddressOnAnotherInterfaceAndAMissingInterface) {
  int st = 0;
  sh("ip addr add 198.51.100.77/24 dev vt1", &st);
  ASSERT_EQ(st, 0);
  auto clash = make(vip("198.51.100.77/24", "vt0"));
  auto r = run(&Resource::start, *clash);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(r.error().message.find("198.51.100.77 is already on vt1"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(findSeen(ipAddr("vt0"), "198.51.100.77"), nullptr);

  auto nowhere = make(vip("198.51.100.78/24", "vt9"));
  r = run(&Resource::start, *nowhere);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find("interface vt9 does not exist"), std::string::npos)
      << r.error().message;
  EXPECT_FALSE(nowhere->present());
  EXPECT_TRUE(run(&Resource::stop, *nowhere));  // nothing there: stopping succeeds
}

TEST_F(VipKernelTest, KernelErrorsNameTheAddressAndInterface) {
  rtnl::AddressRequest req;
  req.prefix = *IpPrefix::parse("198.51.100.90/24");
  req.interface = "vt0";
  auto idx = table_->interfaceIndex("vt0");
  ASSERT_TRUE(idx);
  req.ifindex = *idx;
  auto gone = table_->remove(req);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(gone.error().message.rfind("cannot remove 198.51.100.90/24 on vt0: ", 0), 0u)
      << gone.error().message;
  ASSERT_TRUE(table_->add(req));
  auto twice = table_->add(req);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(twice.error().message.find("cannot add 198.51.100.90/24 on vt0: File exists"),
            std::string::npos)
      << twice.error().message;
  ASSERT_TRUE(table_->remove(req));
  auto name = table_->interfaceName(*idx);
  ASSERT_TRUE(name);
  EXPECT_EQ(*name, "vt0");
}

TEST_F(VipKernelTest, StopRemovesAndStoppingAgainSucceeds) {
  auto v4 = make(vip("198.51.100.50/24", "vt0", "vt0:web"));
  auto v6 = make(vip("2001:db8::50/64", "vt0"));
  ASSERT_TRUE(run(&Resource::stop, *v4));
  ASSERT_TRUE(run(&Resource::stop, *v6));
  auto seen = ipAddr("vt0");
  EXPECT_EQ(findSeen(seen, "198.51.100.50"), nullptr) << sh("ip addr show dev vt0");
  EXPECT_EQ(findSeen(seen, "2001:db8::50"), nullptr) << sh("ip addr show dev vt0");
  EXPECT_FALSE(v4->present());
  EXPECT_EQ(raw_->counts().removes, 2u);
  ASSERT_TRUE(run(&Resource::stop, *v4));
  ASSERT_TRUE(run(&Resource::stop, *v6));
  EXPECT_EQ(raw_->counts().removes, 2u);
  // The address on vt1 from the refusal test was left alone.
  EXPECT_NE(findSeen(ipAddr("vt1"), "198.51.100.77"), nullptr);
}

}  // namespace
}  // namespace tandem::resources

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  using tandem::test::cannotRun;
  const std::string why = tandem::test::enterPrivateNetns("a private network namespace, veth");
  if (!why.empty()) return cannotRun(why);
  // From here on nothing touches the host's network: the namespace dies with this process.
  int st = 0;
  std::string out = tandem::resources::sh(
      "ip link set lo up && ip link add vt0 type veth peer name vt1 && ip link set vt0 up && "
      "ip link set vt1 up",
      &st);
  if (st != 0) return cannotRun("cannot create a veth pair with ip(8): " + out);
  // The tests start once both ends have their carrier: the kernel's own reaction to it (the
  // links' IPv6 set-up) is then under way before any VIP is there, not in the middle of a test.
  out = tandem::resources::sh(
      "for i in $(seq 500); do [ \"$(ip -br link show up | grep -c '^vt[01]@.* UP ')\" = 2 ] && "
      "exit 0; sleep 0.02; done; exit 1",
      &st);
  if (st != 0) {
    std::fprintf(stderr, "FAIL: the veth pair vt0/vt1 did not come up within 10 s\n");
    return 1;
  }
  return RUN_ALL_TESTS();
}
