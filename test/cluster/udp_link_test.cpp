// Real sockets on loopback only.
#include "cluster/udp_link.h"

#include <gtest/gtest.h>

#include <set>

#include "loop/qb_dispatcher.h"

namespace tandem::cluster {
namespace {

using namespace std::chrono_literals;

TEST(UdpLink, DeliversFramesBetweenTwoLinksOverBothFamilies) {
  auto disp = loop::QbDispatcher::create();
  ASSERT_TRUE(disp);
  std::vector<std::pair<std::string, std::string>> got;
  auto a = UdpLink::open(**disp, 0, [&](std::span<const uint8_t> f, const IpAddress& from) {
    got.emplace_back(std::string(f.begin(), f.end()), from.toString());
    if (got.size() == 2) (*disp)->stop();
  });
  ASSERT_TRUE(a) << a.error().message;
  auto b = UdpLink::open(**disp, 0, [](std::span<const uint8_t>, const IpAddress&) {});
  ASSERT_TRUE(b);
  (*b)->setPeers({Endpoint{*IpAddress::parse("127.0.0.1"), (*a)->port()},
                  Endpoint{*IpAddress::parse("::1"), (*a)->port()}});
  std::string frame = "hello";
  (*b)->send(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(frame.data()), frame.size()));
  auto guard = (*disp)->createTimer([&] { (*disp)->stop(); });
  guard->arm(5s);
  (*disp)->run();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, "hello");
  std::set<std::string> sources{got[0].second, got[1].second};
  EXPECT_EQ(sources, (std::set<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ((*b)->sendErrors(), 0u);
}

TEST(UdpLink, ABusyPortIsAClearError) {
  auto disp = loop::QbDispatcher::create();
  ASSERT_TRUE(disp);
  auto a = UdpLink::open(**disp, 0, [](std::span<const uint8_t>, const IpAddress&) {});
  ASSERT_TRUE(a);
  auto b = UdpLink::open(**disp, (*a)->port(), [](std::span<const uint8_t>, const IpAddress&) {});
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("another tandemd"), std::string::npos) << b.error().message;
}

}  // namespace
}  // namespace tandem::cluster
