#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "announce/frames.h"
#include "must_run.h"

namespace tandem::resources::announce {
namespace {

// Golden frames are written out by hand from the layouts in RFC 826, RFC 8200 and RFC 4861;
// the two ICMPv6 checksums were computed independently (a Python one-off over the
// pseudo-header) and are cross-checked by tshark in TsharkDecodes* below.
Frame hex(const std::string& text) {
  Frame out;
  std::istringstream in(text);
  std::string byte;
  while (in >> byte) out.push_back(static_cast<uint8_t>(std::stoul(byte, nullptr, 16)));
  return out;
}

IpAddress ip(const char* s) { return *IpAddress::parse(s); }

const MacAddress kMac{{0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}};
const std::string kZeros18 = " 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00";

TEST(AnnounceFrames, GarpRequestIsBroadcastWithSenderAndTargetTheVip) {
  EXPECT_EQ(buildGarpRequest(kMac, ip("198.51.100.10")),
            hex("ff ff ff ff ff ff 02 00 5e 10 00 01 08 06"
                " 00 01 08 00 06 04 00 01"
                " 02 00 5e 10 00 01 c6 33 64 0a"
                " 00 00 00 00 00 00 c6 33 64 0a" +
                kZeros18));
}

TEST(AnnounceFrames, UnsolicitedNaFromAForwardingInterfaceHasTheRouterFlag) {
  // The same frame with R set: flags a0 00 00 00, and the checksum 0x8000 lower.
  EXPECT_EQ(buildUnsolicitedNa(kMac, ip("2001:db8::10"), NaRouter::kSet),
            hex("33 33 00 00 00 01 02 00 5e 10 00 01 86 dd"
                " 60 00 00 00 00 20 3a ff"
                " 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 10"
                " ff 02 00 00 00 00 00 00 00 00 00 00 00 00 00 01"
                " 88 00 1a fc a0 00 00 00"
                " 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 10"
                " 02 01 02 00 5e 10 00 01"));
  EXPECT_EQ(announcementFrames(kMac, ip("2001:db8::10"), NaRouter::kSet),
            std::vector<Frame>{buildUnsolicitedNa(kMac, ip("2001:db8::10"), NaRouter::kSet)});
}

TEST(AnnounceFrames, GarpReplyCarriesTheMacAsTargetHardwareAddress) {
  EXPECT_EQ(buildGarpReply(kMac, ip("198.51.100.10")),
            hex("ff ff ff ff ff ff 02 00 5e 10 00 01 08 06"
                " 00 01 08 00 06 04 00 02"
                " 02 00 5e 10 00 01 c6 33 64 0a"
                " 02 00 5e 10 00 01 c6 33 64 0a" +
                kZeros18));
}

TEST(AnnounceFrames, UnsolicitedNaHasOverrideSetAndHopLimit255) {
  EXPECT_EQ(buildUnsolicitedNa(kMac, ip("2001:db8::10")),
            hex("33 33 00 00 00 01 02 00 5e 10 00 01 86 dd"
                " 60 00 00 00 00 20 3a ff"
                " 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 10"
                " ff 02 00 00 00 00 00 00 00 00 00 00 00 00 00 01"
                " 88 00 9a fc 20 00 00 00"
                " 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 10"
                " 02 01 02 00 5e 10 00 01"));
}

TEST(AnnounceFrames, ArpProbeAsksForTheNeighbourFromTheVip) {
  EXPECT_EQ(buildArpProbe(kMac, ip("198.51.100.10"), ip("198.51.100.1")),
            hex("ff ff ff ff ff ff 02 00 5e 10 00 01 08 06"
                " 00 01 08 00 06 04 00 01"
                " 02 00 5e 10 00 01 c6 33 64 0a"
                " 00 00 00 00 00 00 c6 33 64 01" +
                kZeros18));
}

TEST(AnnounceFrames, NeighborSolicitationGoesToTheSolicitedNodeGroup) {
  EXPECT_EQ(buildNeighborSolicitation(kMac, ip("2001:db8::10"), ip("2001:db8::1")),
            hex("33 33 ff 00 00 01 02 00 5e 10 00 01 86 dd"
                " 60 00 00 00 00 20 3a ff"
                " 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 10"
                " ff 02 00 00 00 00 00 00 00 00 00 01 ff 00 00 01"
                " 87 00 be 09 00 00 00 00"
                " 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
                " 01 01 02 00 5e 10 00 01"));
}

TEST(AnnounceFrames, AnnouncementIsBothArpFormsForIpv4AndOneNaForIpv6) {
  auto v4 = announcementFrames(kMac, ip("198.51.100.10"));
  ASSERT_EQ(v4.size(), 2u);
  EXPECT_EQ(v4[0], buildGarpRequest(kMac, ip("198.51.100.10")));
  EXPECT_EQ(v4[1], buildGarpReply(kMac, ip("198.51.100.10")));
  auto v6 = announcementFrames(kMac, ip("2001:db8::10"));
  ASSERT_EQ(v6.size(), 1u);
  EXPECT_EQ(v6[0], buildUnsolicitedNa(kMac, ip("2001:db8::10")));
}

TEST(AnnounceFrames, ChecksumOfABuiltMessageVerifiesToZero) {
  Frame na = buildUnsolicitedNa(kMac, ip("2001:db8::10"));
  FrameView icmp = FrameView(na).subspan(54);
  EXPECT_EQ(icmpv6Checksum(ip("2001:db8::10"), ip("ff02::1"), icmp), 0);
  na[60] ^= 0x01;  // a flipped bit in the target
  EXPECT_NE(icmpv6Checksum(ip("2001:db8::10"), ip("ff02::1"), FrameView(na).subspan(54)), 0);
}

// An ARP reply from the neighbour 198.51.100.1 (02:00:5e:00:00:99) to the VIP.
const std::string kArpReply =
    "02 00 5e 10 00 01 02 00 5e 00 00 99 08 06"
    " 00 01 08 00 06 04 00 02"
    " 02 00 5e 00 00 99 c6 33 64 01"
    " 02 00 5e 10 00 01 c6 33 64 0a";

// A solicited NA from 2001:db8::1 (02:00:5e:00:00:99) to the VIP, as a kernel answers an NS.
const std::string kNaReply =
    "02 00 5e 10 00 01 02 00 5e 00 00 99 86 dd"
    " 60 00 00 00 00 20 3a ff"
    " 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
    " 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 10"
    " 88 00 2b cd 60 00 00 00"
    " 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
    " 02 01 02 00 5e 00 00 99";

TEST(AnnounceFrames, ParsesTheNeighboursArpReply) {
  auto mac = parseNeighborReply(hex(kArpReply), ip("198.51.100.1"));
  ASSERT_TRUE(mac);
  EXPECT_EQ(mac->toString(), "02:00:5e:00:00:99");
  EXPECT_FALSE(parseNeighborReply(hex(kArpReply), ip("198.51.100.2"))) << "another neighbour";
  EXPECT_FALSE(parseNeighborReply(hex(kArpReply), ip("2001:db8::1"))) << "another family";
}

TEST(AnnounceFrames, IgnoresArpRequestsTruncatedFramesAndOtherTypes) {
  // Our own probe (a request) names the neighbour as target, never as sender.
  EXPECT_FALSE(parseNeighborReply(buildArpProbe(kMac, ip("198.51.100.10"), ip("198.51.100.1")),
                                  ip("198.51.100.1")));
  // The neighbour's own GARP request is not an answer either.
  EXPECT_FALSE(parseNeighborReply(buildGarpRequest(kMac, ip("198.51.100.1")), ip("198.51.100.1")));
  Frame f = hex(kArpReply);
  for (size_t n = 0; n < f.size(); ++n) {
    EXPECT_FALSE(parseNeighborReply(FrameView(f).first(n), ip("198.51.100.1"))) << n;
  }
  Frame ipv4 = f;
  ipv4[12] = 0x08;
  ipv4[13] = 0x00;
  EXPECT_FALSE(parseNeighborReply(ipv4, ip("198.51.100.1")));
}

TEST(AnnounceFrames, ParsesTheNeighboursAdvertisement) {
  auto mac = parseNeighborReply(hex(kNaReply), ip("2001:db8::1"));
  ASSERT_TRUE(mac);
  EXPECT_EQ(mac->toString(), "02:00:5e:00:00:99");
  EXPECT_FALSE(parseNeighborReply(hex(kNaReply), ip("2001:db8::2")));
}

TEST(AnnounceFrames, RejectsAdvertisementsWithABadChecksumHopLimitOrLength) {
  const Frame good = hex(kNaReply);
  Frame bad_sum = good;
  bad_sum[57] ^= 0xff;
  EXPECT_FALSE(parseNeighborReply(bad_sum, ip("2001:db8::1")));
  Frame forwarded = good;
  forwarded[21] = 64;  // hop limit: not from the link
  EXPECT_FALSE(parseNeighborReply(forwarded, ip("2001:db8::1")));
  Frame long_len = good;
  long_len[19] = 0x40;  // payload length past the frame
  EXPECT_FALSE(parseNeighborReply(long_len, ip("2001:db8::1")));
  Frame zero_opt = good;
  zero_opt[good.size() - 7] = 0;    // option length 0 would loop forever
  zero_opt[56] = zero_opt[57] = 0;  // with a checksum that fits, so the option walk is reached
  const uint16_t sum =
      icmpv6Checksum(ip("2001:db8::1"), ip("2001:db8::10"), FrameView(zero_opt).subspan(54));
  zero_opt[56] = static_cast<uint8_t>(sum >> 8);
  zero_opt[57] = static_cast<uint8_t>(sum);
  EXPECT_FALSE(parseNeighborReply(zero_opt, ip("2001:db8::1")));
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(parseNeighborReply(FrameView(good).first(n), ip("2001:db8::1"))) << n;
  }
}

TEST(AnnounceFrames, MacAddressParsesAndPrints) {
  auto m = MacAddress::parse("02:00:5E:10:00:01");
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, kMac);
  EXPECT_EQ(m->toString(), "02:00:5e:10:00:01");
  EXPECT_FALSE(MacAddress::parse("02:00:5e:10:00"));
  EXPECT_FALSE(MacAddress::parse("02-00-5e-10-00-01"));
  EXPECT_FALSE(MacAddress::parse("02:00:5e:10:00:0g"));
  EXPECT_TRUE(MacAddress{}.isZero());
  EXPECT_FALSE(kMac.isZero());
}

// --- tshark, the independent judge ------------------------------------------------------------

void writePcap(const std::string& path, const std::vector<Frame>& frames) {
  std::ofstream out(path, std::ios::binary);
  auto u32 = [&out](uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&out](uint16_t v) { out.write(reinterpret_cast<const char*>(&v), 2); };
  u32(0xa1b2c3d4);  // native byte order: readers detect it from the magic
  u16(2);
  u16(4);
  u32(0);
  u32(0);
  u32(65535);
  u32(1);  // LINKTYPE_ETHERNET
  uint32_t sec = 1;
  for (const Frame& f : frames) {
    u32(sec++);
    u32(0);
    u32(static_cast<uint32_t>(f.size()));
    u32(static_cast<uint32_t>(f.size()));
    out.write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
  }
}

// tshark's decoding of each frame: one line of comma-separated fields per frame.
std::vector<std::string> tshark(const std::vector<Frame>& frames, const std::string& fields) {
  char tmpl[] = "/tmp/tandem-announce-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  EXPECT_GE(fd, 0);
  ::close(fd);
  const std::string path = tmpl;
  writePcap(path, frames);
  std::string cmd = "tshark -n -r " + path + " -T fields -E separator=, -E occurrence=f";
  std::istringstream list(fields);
  std::string f;
  while (list >> f) cmd += " -e " + f;
  cmd += " 2>/dev/null";
  std::vector<std::string> lines;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[1024];
    while (std::fgets(buf, sizeof buf, p)) {
      std::string line = buf;
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
      lines.push_back(line);
    }
    EXPECT_EQ(::pclose(p), 0) << cmd;
  }
  ::unlink(path.c_str());
  return lines;
}

class Tshark : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v tshark >/dev/null 2>&1") == 0) return;
    if (test::mustRun()) FAIL() << "tshark is not installed and TANDEM_TEST_NO_SKIP=1";
    GTEST_SKIP() << "tshark is not installed";
  }
};

TEST_F(Tshark, DecodesBothGarpFormsAsGratuitousFromTheMac) {
  auto lines = tshark(announcementFrames(kMac, ip("198.51.100.10")),
                      "eth.dst eth.src arp.opcode arp.isgratuitous arp.src.hw_mac "
                      "arp.src.proto_ipv4 arp.dst.proto_ipv4");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(
      lines[0],
      "ff:ff:ff:ff:ff:ff,02:00:5e:10:00:01,1,1,02:00:5e:10:00:01,198.51.100.10,198.51.100.10");
  EXPECT_EQ(
      lines[1],
      "ff:ff:ff:ff:ff:ff,02:00:5e:10:00:01,2,1,02:00:5e:10:00:01,198.51.100.10,198.51.100.10");
}

TEST_F(Tshark, DecodesTheNaAsUnsolicitedWithOverrideAndAGoodChecksum) {
  auto lines = tshark({buildUnsolicitedNa(kMac, ip("2001:db8::10"))},
                      "eth.dst ipv6.src ipv6.dst ipv6.hlim icmpv6.type icmpv6.checksum.status "
                      "icmpv6.nd.na.flag.r icmpv6.nd.na.flag.s icmpv6.nd.na.flag.o "
                      "icmpv6.nd.na.target_address icmpv6.opt.linkaddr");
  ASSERT_EQ(lines.size(), 1u);
  // checksum.status 1 is "Good".
  EXPECT_EQ(
      lines[0],
      "33:33:00:00:00:01,2001:db8::10,ff02::1,255,136,1,0,0,1,2001:db8::10,02:00:5e:10:00:01");
}

TEST_F(Tshark, DecodesTheProbes) {
  auto lines = tshark({buildArpProbe(kMac, ip("198.51.100.10"), ip("198.51.100.1")),
                       buildNeighborSolicitation(kMac, ip("2001:db8::10"), ip("2001:db8::1"))},
                      "arp.opcode arp.isgratuitous arp.src.proto_ipv4 arp.dst.proto_ipv4 "
                      "ipv6.dst icmpv6.type icmpv6.checksum.status icmpv6.nd.ns.target_address "
                      "icmpv6.opt.linkaddr");
  ASSERT_EQ(lines.size(), 2u);
  // Not gratuitous: tshark leaves arp.isgratuitous out.
  EXPECT_EQ(lines[0], "1,,198.51.100.10,198.51.100.1,,,,,");
  EXPECT_EQ(lines[1], ",,,,ff02::1:ff00:1,135,1,2001:db8::1,02:00:5e:10:00:01");
}

}  // namespace
}  // namespace tandem::resources::announce
