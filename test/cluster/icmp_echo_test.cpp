// The echo codec against bytes worked out independently (RFC 1071 by hand and in Python), and
// one round trip through the real kernel on loopback, which answers only a request whose
// checksum is right.
#include "ping/icmp_echo.h"

#include <gtest/gtest.h>

#include "loop/qb_dispatcher.h"
#include "ping/raw_echo_transport.h"

namespace tandem::ping {
namespace {

using namespace std::chrono_literals;

Bytes hex(std::string_view h) {
  Bytes out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

const Bytes kPayload = hex("0123456789abcdef");

TEST(InternetChecksum, MatchesTheRfc1071Example) {
  // RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to ddf2; the checksum is its
  // complement.
  EXPECT_EQ(internetChecksum(hex("0001f203f4f5f6f7")), 0x220d);
  // An odd length pads the last byte with zero.
  EXPECT_EQ(internetChecksum(hex("0001f203f4f5f6")), 0x2304);
  EXPECT_EQ(internetChecksum(hex("0001f203f4f5f6f7220d")), 0);
}

TEST(IcmpEcho, BuildsTheIpv4RequestByteForByte) {
  Bytes got = buildEchoRequest(Family::kInet, Echo{0x1234, 0x0001, kPayload});
  EXPECT_EQ(got, hex("08"                   // type: echo request
                     "00"                   // code
                     "47a5"                 // checksum
                     "1234"                 // identifier
                     "0001"                 // sequence
                     "0123456789abcdef"));  // payload
}

TEST(IcmpEcho, BuildsTheIpv6RequestWithTheChecksumLeftToTheKernel) {
  Bytes got = buildEchoRequest(Family::kInet6, Echo{0xbeef, 0xfffe, kPayload});
  EXPECT_EQ(got, hex("80"
                     "00"
                     "0000"
                     "beef"
                     "fffe"
                     "0123456789abcdef"));
}

TEST(IcmpEcho, ParsesAnIpv4Reply) {
  auto e = parseEchoReply(Family::kInet, hex("00004fa5123400010123456789abcdef"));
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, (Echo{0x1234, 0x0001, kPayload}));
}

TEST(IcmpEcho, RejectsABadIpv4ChecksumAndOtherTypes) {
  EXPECT_FALSE(parseEchoReply(Family::kInet, hex("00004fa6123400010123456789abcdef")));
  // Our own request, as a raw socket without a filter would see it.
  EXPECT_FALSE(parseEchoReply(Family::kInet, hex("080047a5123400010123456789abcdef")));
  // Destination unreachable.
  EXPECT_FALSE(parseEchoReply(Family::kInet, hex("0301fcfe00000000")));
  EXPECT_FALSE(parseEchoReply(Family::kInet, hex("0000ffff1234")));  // truncated
  EXPECT_FALSE(parseEchoReply(Family::kInet6, hex("8000000012340001")));
}

TEST(IcmpEcho, ParsesAnIpv6ReplyWhateverItsChecksum) {
  auto e = parseEchoReply(Family::kInet6, hex("81001234beeffffe0123456789abcdef"));
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, (Echo{0xbeef, 0xfffe, kPayload}));
  EXPECT_FALSE(parseEchoReply(Family::kInet6, hex("81011234beeffffe")));  // code 1
}

TEST(IcmpEcho, StripsTheIpv4Header) {
  // 20-byte header (IHL 5), total length 36, protocol 1, 127.0.0.1 -> 127.0.0.1.
  Bytes packet =
      hex("4500002400004000400100007f0000017f000001"
          "00004fa5123400010123456789abcdef");
  auto icmp = icmpOfIpv4Packet(packet);
  ASSERT_TRUE(icmp);
  EXPECT_EQ(Bytes(icmp->begin(), icmp->end()), hex("00004fa5123400010123456789abcdef"));
  // With options (IHL 6) the message starts 4 bytes later.
  Bytes with_options =
      hex("4600002800004000400100007f0000017f00000101010101"
          "00004fa5123400010123456789abcdef");
  icmp = icmpOfIpv4Packet(with_options);
  ASSERT_TRUE(icmp);
  EXPECT_EQ(icmp->size(), 16u);
  EXPECT_FALSE(icmpOfIpv4Packet(hex("4500002400004000400600007f0000017f000001")));  // TCP
  EXPECT_FALSE(icmpOfIpv4Packet(hex("4f00002400004000400100007f000001")));          // IHL too long
  EXPECT_FALSE(icmpOfIpv4Packet(hex("6000000000000000")));                          // not IPv4
}

// The real kernel on loopback: it answers only a well-formed request, and the transport hands
// back only the reply (the filter keeps our own request out).
TEST(RawEchoTransport, TheKernelAnswersOurRequestsOnLoopback) {
  auto disp = loop::QbDispatcher::create();
  ASSERT_TRUE(disp);
  std::vector<std::pair<std::string, Echo>> got;
  auto t = RawEchoTransport::open(**disp, true, true,
                                  [&](const IpAddress& from, std::span<const uint8_t> icmp) {
                                    auto e = parseEchoReply(from.family, icmp);
                                    if (e && e->identifier == 0x7a7a)
                                      got.emplace_back(from.toString(), *e);
                                    if (got.size() == 2) (*disp)->stop();
                                  });
  if (!t && t.error().message.find("CAP_NET_RAW") != std::string::npos) {
    GTEST_SKIP() << t.error().message;
  }
  ASSERT_TRUE(t) << t.error().message;
  auto v4 = *IpAddress::parse("127.0.0.1");
  auto v6 = *IpAddress::parse("::1");
  ASSERT_TRUE((*t)->send(v4, buildEchoRequest(Family::kInet, Echo{0x7a7a, 7, kPayload})));
  ASSERT_TRUE((*t)->send(v6, buildEchoRequest(Family::kInet6, Echo{0x7a7a, 8, kPayload})));
  auto guard = (*disp)->createTimer([&] { (*disp)->stop(); });
  guard->arm(5s);
  (*disp)->run();
  ASSERT_EQ(got.size(), 2u);
  std::map<std::string, Echo> by_source(got.begin(), got.end());
  EXPECT_EQ(by_source["127.0.0.1"], (Echo{0x7a7a, 7, kPayload}));
  EXPECT_EQ(by_source["::1"], (Echo{0x7a7a, 8, kPayload}));
}

}  // namespace
}  // namespace tandem::ping
