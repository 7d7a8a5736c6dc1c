// The rtnetlink codec against bytes from the real thing.
//
// How the golden bytes were captured (Debian 12, iproute2 6.1.0, strace 6.1, kernel 6.18), in a
// private network namespace so nothing touched the host:
//
//   unshare -n sh -c '
//     ip link add d0 type veth peer name d1; ip link set d0 up        # d1 is 2, d0 is 3
//     S="strace -xx -e trace=sendmsg,sendto,recvmsg -e write=all -e read=all -o OUT"
//     $S ip addr add 198.51.100.50/24 dev d0 label d0:vip             # kIpAddrAdd4, kAckOk
//     $S ip -6 addr add 2001:db8::50/64 dev d0 nodad                  # kIpAddrAdd6
//     $S ip addr add 198.51.100.50/24 dev d0 label d0:vip             # kAckExists (again)
//     $S ip addr del 198.51.100.50/24 dev d0                          # kIpAddrDel4
//     $S ip -6 addr del 2001:db8::50/64 dev d0                        # kIpAddrDel6
//     $S ip addr del 198.51.100.50/24 dev d0                          # kAckNotFound (again)
//     $S ip link show dev d0 ; ip -6 addr show dev d0 ; ip -4 addr show dev d0
//     $S ip link show dev nosuch'                                     # kAckNoDevice
//
// and the hex columns of strace's dumps joined. `ip` stamps every request of a run with one
// sequence number (0x6b0d7b2d here); the encoders are given that number, so no byte is masked
// except where noted. The dump replies came from the kernel to a plain RTM_GETADDR dump (a few
// lines of Python on an AF_NETLINK socket, seq 1 and 2) in a namespace holding d0
// 198.51.100.50/24 label d0:vip, d0 203.0.113.7/24, d1 198.51.100.60/24, d0 2001:db8::50/64
// nodad, d1 2001:db8::60/64, with lo and both veths up.
#include "netlink/rtnl_codec.h"

#include <gtest/gtest.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <string>
#include <vector>

namespace tandem::resources::rtnl {
namespace {

constexpr uint32_t kIpSeq = 0x6b0d7b2d;

std::vector<uint8_t> hex(std::string_view h) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string toHex(const std::vector<uint8_t>& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

IpPrefix pfx(const char* s) { return *IpPrefix::parse(s); }

AddressRequest v4Request() {
  return AddressRequest{pfx("198.51.100.50/24"), 3, "d0", "d0:vip", false};
}
AddressRequest v6Request() { return AddressRequest{pfx("2001:db8::50/64"), 3, "d0", "", true}; }

// ip addr add 198.51.100.50/24 dev d0 label d0:vip
constexpr const char* kIpAddrAdd4 =
    "34000000140005062d7b0d6b00000000021800000300000008000200c63364320b00030064303a7669700000"
    "08000100c6336432";
// ip -6 addr add 2001:db8::50/64 dev d0 nodad
constexpr const char* kIpAddrAdd6 =
    "40000000140005062d7b0d6b000000000a400200030000001400020020010db8000000000000000000000050"
    "1400010020010db8000000000000000000000050";
// ip addr del 198.51.100.50/24 dev d0
constexpr const char* kIpAddrDel4 =
    "28000000150005002d7b0d6b00000000021800000300000008000200c633643208000100c6336432";
// ip -6 addr del 2001:db8::50/64 dev d0
constexpr const char* kIpAddrDel6 =
    "40000000150005002d7b0d6b000000000a400000030000001400020020010db8000000000000000000000050"
    "1400010020010db8000000000000000000000050";
// ip link show dev d0 (the by-name lookup `ip` does first)
constexpr const char* kIpGetLinkByName =
    "30000000120001002d7b0d6b000000000000000000000000000000000000000008001d000900000007000300"
    "64300000";
// ip -6 addr show dev d0, looking up d0's peer d1 by index 2
constexpr const char* kIpGetLinkByIndex =
    "28000000120001002d7b0d6b00000000000000000200000000000000000000000800"
    "1d0009000000";
// ip -4 addr show dev d0: the dump request's first 24 bytes (seq 0x6b0d7b2e). `ip` asks the
// kernel to filter by ifindex (bytes 20..23 were 03000000); tandem dumps every interface, so
// those bytes are zeroed here.
constexpr const char* kIpDumpAddr4 = "18000000160001032e7b0d6b000000000200000000000000";

// The kernel's answers.
constexpr const char* kAckOk =
    "24000000020000012d7b0d6b3c1300000000000034000000140005062d7b0d6b00000000";
constexpr const char* kAckExists =
    "6c000000020000022d7b0d6b4d130000efffffff34000000140005062d7b0d6b0000000002180000030000000800"
    "0200c63364320b00030064303a766970000008000100c633643223000100697076343a20416464726573732061"
    "6c72656164792061737369676e65640000";
constexpr const char* kAckNotFound =
    "58000000020000022d7b0d6b5c1300009dffffff28000000150005002d7b0d6b0000000002180000030000000800"
    "0200c633643208000100c63364321c000100697076343a2041646472657373206e6f7420666f756e6400";
constexpr const char* kAckNoDevice =
    "48000000020000002f7e0d6b10a5c09bedffffff34000000120001002f7e0d6b0000000000000000000000000000"
    "00000000000008001d00090000000b0003006e6f737563680000";
// The RTM_NEWLINK answer to kIpGetLinkByName (1124 bytes).
constexpr const char* kLinkReply =
    "64040000100000002d7b0d6b8b6dd48100000100030000000310000000000000070003006430000008000d00"
    "e803000005001000030000000500110000000000050043000000000008000400dc0500000800320044000000"
    "08003300ffff000008001b000000000008001e000000000008003d000000000008001f000200000008002800"
    "ffff0000080029000000010008003a000000010008003f0000000100080040000000010008003b00f8ff0700"
    "08003c00ffff0000080042000000000008002000020000000500210000000000080023000100000008002f00"
    "0000000008003000010000000600440000000000060045000000000005002700000000000a0001008a2ba1b1"
    "22d100000a000200ffffffffffff0000cc001700000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "6400070000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000c002b0005000200000000001000120009000100766574680000000008000500"
    "020000000c0006006e6f717565756500c0011a008c0002008800010000000000000000000000000001000000"
    "0100000001000000010000000000000001000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "10270000e8030000000000000000000000000000000000000100000030010a00080001000000000014000500"
    "ffff0000205f0f009c620000e8030000f40002000000000040000000dc050000010000000100000001000000"
    "01000000ffffffffa00f0000e803000000000000803a09008051010003000000580200001000000000000000"
    "01000000010000000100000060ea000000000000000000000000000000000000000000000000000001000000"
    "000000000000000010270000e803000001000000000000000000000001000000000000000000000001000000"
    "0000000000000000000000000000000080ee3600000000000000000001000000000000000000000000000000"
    "00000000000000000004000000000000ffff0000ffffffff0100000000000000000000000000000014000700"
    "00000000000000000000000000000000050008000000000024000e0000000000000000000000000000000000"
    "0000000000000000000000000000000004003e8004004180";
// RTM_GETADDR dump, AF_INET: lo, d1, d0 (labelled), d0; then NLMSG_DONE in a second read.
constexpr const char* kDump4 =
    "4c000000140002000100000064190000020880fe01000000080001007f000001080002007f00000107000300"
    "6c6f0000080008008000000014000600ffffffffffffffffc86d0f00c86d0f004c0000001400020001000000"
    "64190000021880000200000008000100c633643c08000200c633643c07000300643100000800080080000000"
    "14000600ffffffffffffffffda6d0f00da6d0f0050000000140002000100000064190000021880000300000008"
    "000100c633643208000200c63364320b00030064303a7669700000080008008000000014000600ffffffffffff"
    "ffffd86d0f00d86d0f004c000000140002000100000064190000021880000300000008000100cb0071070800"
    "0200cb0071070700030064300000080008008000000014000600ffffffffffffffffd96d0f00d96d0f00";
constexpr const char* kDump4Done = "1400000003000200010000006419000000000000";
// RTM_GETADDR dump, AF_INET6: ::1, 2001:db8::60 on d1, fe80:: on d1, 2001:db8::50 nodad on d0,
// fe80:: on d0, and NLMSG_DONE, all in one read.
constexpr const char* kDump6 =
    "500000001400020002000000641900000a8080fe010000001400010000000000000000000000000000000001"
    "14000600ffffffffffffffffc86d0f00c86d0f00080008008000000005000b0001000000480000001400020002"
    "000000641900000a408000020000001400010020010db800000000000000000000006014000600ffffffffffff"
    "ffffdd6d0f00dd6d0f000800080080000000500000001400020002000000641900000a4080fd020000001400"
    "0100fe8000000000000074bb18fffee4b3f214000600ffffffffffffffffcb6d0f00cb6d0f000800080080000000"
    "05000b0003000000480000001400020002000000641900000a408200030000001400010020010db80000000000"
    "0000000000005014000600ffffffffffffffffdc6d0f00dc6d0f000800080082000000500000001400020002"
    "000000641900000a4080fd0300000014000100fe800000000000007c774dfffe07b8f214000600ffffffffffff"
    "ffffcb6d0f00cb6d0f00080008008000000005000b00030000001400000003000200020000006419000000000000";

TEST(RtnlEncode, NewAddressIpv4WithLabelIsWhatIpAddrAddSends) {
  auto b = encodeNewAddress(v4Request(), kIpSeq);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(toHex(*b), kIpAddrAdd4);
}

TEST(RtnlEncode, NewAddressIpv6NodadIsWhatIpAddrAddSends) {
  auto b = encodeNewAddress(v6Request(), kIpSeq);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(toHex(*b), kIpAddrAdd6);
}

TEST(RtnlEncode, DeleteAddressCarriesNoLabelAndNoFlags) {
  auto b4 = encodeDeleteAddress(v4Request(), kIpSeq);
  auto b6 = encodeDeleteAddress(v6Request(), kIpSeq);
  ASSERT_TRUE(b4 && b6);
  EXPECT_EQ(toHex(*b4), kIpAddrDel4);
  EXPECT_EQ(toHex(*b6), kIpAddrDel6);
}

TEST(RtnlEncode, GetLinkByNameAndByIndex) {
  EXPECT_EQ(toHex(encodeGetLink("d0", 0, kIpSeq)), kIpGetLinkByName);
  EXPECT_EQ(toHex(encodeGetLink("", 2, kIpSeq)), kIpGetLinkByIndex);
}

// `ip link set dev rhi0 up` sends this for index 2 (plus the name, which tandem leaves out:
// the index names the device): RTM_NEWLINK, request and ack, IFF_UP in flags and change.
TEST(RtnlEncode, SetLinkUpChangesOnlyTheUpFlag) {
  EXPECT_EQ(toHex(encodeSetLinkUp(2, kIpSeq)),
            "20000000100005002d7b0d6b00000000"  // nlmsghdr: 32 bytes, type 16, flags 5
            "0000000002000000"
            "0100000001000000");  // ifinfomsg: index 2, flags/change IFF_UP
}

TEST(RtnlEncode, DumpRequestAsksForEveryAddressOfOneFamily) {
  EXPECT_EQ(toHex(encodeDumpAddresses(Family::kInet, kIpSeq + 1)), kIpDumpAddr4);
  auto six = encodeDumpAddresses(Family::kInet6, 7);
  ASSERT_EQ(six.size(), 24u);
  EXPECT_EQ(six[16], 10);  // AF_INET6
}

TEST(RtnlEncode, RejectsBadLabelsAndPrefixes) {
  auto r = v4Request();
  r.label = "eth0:web";  // not d0's
  auto b = encodeNewAddress(r, 1);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(b.error().message.find("must start with its interface name \"d0\""), std::string::npos)
      << b.error().message;

  r.label = "d0:abcdefghijklm";  // 16 characters
  b = encodeNewAddress(r, 1);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("longer than 15"), std::string::npos);

  r.label = "d0:abcdefghijkl";  // 15: the most IFNAMSIZ holds
  EXPECT_TRUE(encodeNewAddress(r, 1));

  auto six = v6Request();
  six.label = "d0:v6";
  b = encodeNewAddress(six, 1);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("IPv4 addresses only"), std::string::npos);

  auto bad = v4Request();
  bad.prefix.length = 33;
  EXPECT_FALSE(encodeNewAddress(bad, 1));
  bad = v4Request();
  bad.ifindex = 0;
  EXPECT_FALSE(encodeDeleteAddress(bad, 1));
}

TEST(RtnlDecode, SuccessAck) {
  auto m = decode(hex(kAckOk));
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].kind, Message::Kind::kAck);
  EXPECT_EQ((*m)[0].error, 0);
  EXPECT_EQ((*m)[0].seq, kIpSeq);
  EXPECT_EQ((*m)[0].pid, 0x133cu);
}

TEST(RtnlDecode, ErrorAcksCarryErrnoAndTheKernelsWords) {
  auto exists = decode(hex(kAckExists));
  ASSERT_TRUE(exists) << exists.error().message;
  ASSERT_EQ(exists->size(), 1u);
  EXPECT_EQ((*exists)[0].error, EEXIST);
  EXPECT_EQ((*exists)[0].kernel_message, "ipv4: Address already assigned");

  auto gone = decode(hex(kAckNotFound));
  ASSERT_TRUE(gone);
  EXPECT_EQ((*gone)[0].error, EADDRNOTAVAIL);
  EXPECT_EQ((*gone)[0].kernel_message, "ipv4: Address not found");

  auto nodev = decode(hex(kAckNoDevice));
  ASSERT_TRUE(nodev);
  EXPECT_EQ((*nodev)[0].error, ENODEV);
  EXPECT_EQ((*nodev)[0].kernel_message, "");
}

TEST(RtnlDecode, AckErrorNamesWhatFailedAndMapsErrno) {
  Error e = ackError(EEXIST, "cannot add 198.51.100.50/24 on d0", "ipv4: Address already assigned");
  EXPECT_EQ(e.code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(e.message,
            "cannot add 198.51.100.50/24 on d0: File exists (kernel: ipv4: Address already "
            "assigned)");
  EXPECT_EQ(ackError(EPERM, "x", "").code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(ackError(ENODEV, "x", "").code, ErrorCode::kNotFound);
  EXPECT_EQ(ackError(EADDRNOTAVAIL, "x", "").code, ErrorCode::kNotFound);
  EXPECT_EQ(ackError(EBUSY, "x", "").code, ErrorCode::kTryAgain);
}

TEST(RtnlDecode, LinkReplyGivesIndexAndName) {
  auto m = decode(hex(kLinkReply));
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].kind, Message::Kind::kLink);
  EXPECT_EQ((*m)[0].link.ifindex, 3u);
  EXPECT_EQ((*m)[0].link.name, "d0");
  EXPECT_EQ((*m)[0].seq, kIpSeq);
}

TEST(RtnlDecode, Ipv4DumpReply) {
  auto m = decode(hex(kDump4));
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->size(), 4u);
  for (const auto& msg : *m) {
    EXPECT_EQ(msg.kind, Message::Kind::kAddress);
    EXPECT_TRUE(msg.flags & NLM_F_MULTI);
    EXPECT_FALSE(msg.dump_interrupted);
  }
  const AddressEntry& lo = (*m)[0].address;
  EXPECT_EQ(lo.ifindex, 1u);
  EXPECT_EQ(lo.prefix, pfx("127.0.0.1/8"));
  EXPECT_EQ(lo.label, "lo");
  EXPECT_EQ(lo.scope, RT_SCOPE_HOST);
  const AddressEntry& vip = (*m)[2].address;
  EXPECT_EQ(vip.ifindex, 3u);
  EXPECT_EQ(vip.prefix, pfx("198.51.100.50/24"));
  EXPECT_EQ(vip.label, "d0:vip");
  EXPECT_EQ(vip.flags, static_cast<uint32_t>(IFA_F_PERMANENT));
  EXPECT_EQ((*m)[1].address.prefix, pfx("198.51.100.60/24"));
  EXPECT_EQ((*m)[1].address.ifindex, 2u);
  EXPECT_EQ((*m)[3].address.prefix, pfx("203.0.113.7/24"));

  auto done = decode(hex(kDump4Done));
  ASSERT_TRUE(done);
  ASSERT_EQ(done->size(), 1u);
  EXPECT_EQ((*done)[0].kind, Message::Kind::kDone);
  EXPECT_EQ((*done)[0].error, 0);
}

// The kernel's notification of a removal (RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR) has the body
// of the deletion `ip addr del` sends (kIpAddrDel4/6): it decodes as an address, its type
// RTM_DELADDR, so a watcher of address events tells an addition from a removal by type alone.
TEST(RtnlDecode, AnAddressRemovalDecodesAsAnAddressOfTypeDelAddr) {
  for (const char* bytes : {kIpAddrDel4, kIpAddrDel6}) {
    auto m = decode(hex(bytes));
    ASSERT_TRUE(m) << m.error().message;
    ASSERT_EQ(m->size(), 1u);
    EXPECT_EQ((*m)[0].kind, Message::Kind::kAddress);
    EXPECT_EQ((*m)[0].type, RTM_DELADDR);
    EXPECT_EQ((*m)[0].address.ifindex, 3u);
  }
  EXPECT_EQ((*decode(hex(kIpAddrDel4)))[0].address.prefix, pfx("198.51.100.50/24"));
  EXPECT_EQ((*decode(hex(kIpAddrDel6)))[0].address.prefix, pfx("2001:db8::50/64"));
}

TEST(RtnlDecode, Ipv6DumpReplyKeepsNodadAndEndsWithDone) {
  auto m = decode(hex(kDump6));
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->size(), 6u);
  const AddressEntry& vip = (*m)[3].address;
  EXPECT_EQ(vip.ifindex, 3u);
  EXPECT_EQ(vip.prefix, pfx("2001:db8::50/64"));
  EXPECT_EQ(vip.flags, static_cast<uint32_t>(IFA_F_NODAD | IFA_F_PERMANENT));
  EXPECT_EQ(vip.label, "");
  EXPECT_EQ((*m)[1].address.prefix, pfx("2001:db8::60/64"));
  EXPECT_EQ((*m)[2].address.scope, RT_SCOPE_LINK);
  EXPECT_EQ((*m)[5].kind, Message::Kind::kDone);
}

// kernel_reply_fuzz found this: a length of 0xfffffffc passed libmnl's mnl_nlmsg_ok() (which
// compares it as the int -4) and the walk ran off the buffer.
TEST(RtnlDecode, AHugeMessageLengthIsAParseErrorNotAWalkOffTheBuffer) {
  std::vector<uint8_t> msg(17, 0);
  msg[0] = 0xfc, msg[1] = 0xff, msg[2] = 0xff, msg[3] = 0xff;  // nlmsg_len
  msg[4] = RTM_NEWADDR;
  auto m = decode(msg);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::kParse);
}

TEST(RtnlDecode, TruncatedOrMalformedInputIsAParseError) {
  auto full = hex(kDump4);
  for (size_t cut : {size_t{3}, size_t{17}, size_t{40}, full.size() - 1}) {
    auto part = std::vector<uint8_t>(full.begin(), full.begin() + static_cast<long>(cut));
    auto m = decode(part);
    EXPECT_FALSE(m) << "cut at " << cut;
    if (!m) {
      EXPECT_EQ(m.error().code, ErrorCode::kParse);
    }
  }
  // An IPv4 address attribute of 5 bytes.
  auto bad = hex(kDump4);
  bad[0x18] = 9;  // lo's first attribute (IFA_ADDRESS) claims 5 bytes of payload
  auto m = decode(bad);
  EXPECT_FALSE(m);
  // An ack whose echoed request claims more than the message holds.
  auto ack = hex(kAckExists);
  ack[20] = 0xff;
  EXPECT_FALSE(decode(ack));
}

TEST(RtnlDecode, EmptyBufferHasNoMessages) {
  auto m = decode({});
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->empty());
}

// Host routes (route health injection), captured the same way in a namespace holding one ifb
// device r0 (index 2; this kernel has no dummy devices) with lo up, `ip` stamping seq 0x6b14c947:
//
//   ip route add 198.51.100.80/32 dev r0 proto 190 table 100 metric 20               kIpRouteAdd4
//   ip -6 route add 2001:db8:5::80/128 dev r0 proto 190 table 100 metric 20          kIpRouteAdd6
//   ip route add blackhole 198.51.100.81/32 proto 190 table 1000 metric 30          kIpRouteAddBh
//   ip route del 198.51.100.80/32 dev r0 proto 190 table 100 metric 20               kIpRouteDel4
//   ip -6 route show table 100 proto 201   the request's first 36 bytes, kIpRouteDump6
//   ip -6 route show table 100     kRouteReply6
//   ip -4 route show table 1000    kRouteReplyBh (the kernel's rtmsg says table 252, "compat")
constexpr uint32_t kRouteSeq = 0x6b14c947;
constexpr const char* kIpRouteAdd4 =
    "340000001800050647c9146b000000000220000064befd010000000008000100c633645008000600140000000800"
    "040002000000";
constexpr const char* kIpRouteAdd6 =
    "400000001800050647c9146b000000000a80000064be0001000000001400010020010db8000500000000000000"
    "00008008000600140000000800040002000000";
constexpr const char* kIpRouteAddBh =
    "340000001800050647c9146b000000000220000000be00060000000008000100c633645108000f00e80300000800"
    "06001e000000";
constexpr const char* kIpRouteDel4 =
    "340000001900050047c9146b000000000220000064beff000000000008000100c633645008000600140000000800"
    "040002000000";
constexpr const char* kIpRouteDump6 =
    "240000001a00010347c9146b000000000a00000000c900000000000008000f0064000000";
constexpr const char* kRouteReply6 =
    "740000001800220047c9146be52500000a80000064be00010000000008000f00640000001400010020010db80005"
    "000000000000000000800800060014000000080004000200000024000c00000000000000000000000000000000"
    "00000000000000000000000000000000000500140000000000"
    "140000000300220047c9146be525000000000000";
constexpr const char* kRouteReplyBh =
    "340000001800220047c9146be925000002200000fcbe00060000000008000f00e803000008000100c63364510800"
    "06001e000000";

RouteRequest route4() { return RouteRequest{pfx("198.51.100.80/32"), 100, 190, 20, 2}; }

TEST(RtnlEncode, NewRouteIsWhatIpRouteAddSends) {
  auto b4 = encodeNewRoute(route4(), kRouteSeq);
  auto b6 = encodeNewRoute(RouteRequest{pfx("2001:db8:5::80/128"), 100, 190, 20, 2}, kRouteSeq);
  auto bh = encodeNewRoute(RouteRequest{pfx("198.51.100.81/32"), 1000, 190, 30, 0}, kRouteSeq);
  ASSERT_TRUE(b4 && b6 && bh);
  EXPECT_EQ(toHex(*b4), kIpRouteAdd4);  // link scope: IPv4 through an interface
  EXPECT_EQ(toHex(*b6), kIpRouteAdd6);
  EXPECT_EQ(toHex(*bh), kIpRouteAddBh);  // table 1000 in RTA_TABLE, a blackhole
}

TEST(RtnlEncode, DeleteRouteMatchesAnyTypeAndScope) {
  auto b = encodeDeleteRoute(route4(), kRouteSeq);
  ASSERT_TRUE(b);
  EXPECT_EQ(toHex(*b), kIpRouteDel4);
}

TEST(RtnlEncode, DumpRoutesOfOneTableAndProtocol) {
  EXPECT_EQ(toHex(encodeDumpRoutes(Family::kInet6, 100, 201, kRouteSeq)), kIpRouteDump6);
}

TEST(RtnlEncode, RefusesRoutesInTableZeroOrLocalAndBadPrefixes) {
  for (uint32_t table : {0u, 255u}) {
    RouteRequest r = route4();
    r.table = table;
    auto b = encodeNewRoute(r, 1);
    ASSERT_FALSE(b);
    EXPECT_NE(b.error().message.find("table " + std::to_string(table)), std::string::npos);
  }
  RouteRequest r = route4();
  r.prefix.length = 33;
  EXPECT_FALSE(encodeDeleteRoute(r, 1));
}

TEST(RtnlDecode, RouteDumpReplies) {
  auto m = decode(hex(kRouteReply6));
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->size(), 2u);
  const Message& r = (*m)[0];
  ASSERT_EQ(r.kind, Message::Kind::kRoute);
  EXPECT_EQ(r.type, RTM_NEWROUTE);
  EXPECT_EQ(r.route.prefix.toString(), "2001:db8:5::80/128");
  EXPECT_EQ(r.route.table, 100u);
  EXPECT_EQ(r.route.protocol, 190);
  EXPECT_EQ(r.route.type, RTN_UNICAST);
  EXPECT_EQ(r.route.metric, 20u);
  EXPECT_EQ(r.route.ifindex, 2u);
  EXPECT_EQ((*m)[1].kind, Message::Kind::kDone);

  auto bh = decode(hex(kRouteReplyBh));
  ASSERT_TRUE(bh) << bh.error().message;
  ASSERT_EQ(bh->size(), 1u);
  EXPECT_EQ((*bh)[0].route.prefix.toString(), "198.51.100.81/32");
  EXPECT_EQ((*bh)[0].route.table, 1000u);  // RTA_TABLE, not rtmsg's 252
  EXPECT_EQ((*bh)[0].route.type, RTN_BLACKHOLE);
  EXPECT_EQ((*bh)[0].route.metric, 30u);
  EXPECT_EQ((*bh)[0].route.ifindex, 0u);
}

TEST(RtnlDecode, MalformedRouteMessagesAreParseErrors) {
  auto wrong_dst = hex(kRouteReplyBh);
  wrong_dst[28] = 7;  // RTA_TABLE's length: 7 is not a u32
  EXPECT_FALSE(decode(wrong_dst));
  auto long_prefix = hex(kRouteReplyBh);
  long_prefix[17] = 33;  // dst_len 33 for IPv4
  EXPECT_FALSE(decode(long_prefix));
  auto short_msg = hex(kRouteReplyBh);
  short_msg.resize(24);
  short_msg[0] = 24;  // a header and half an rtmsg
  EXPECT_FALSE(decode(short_msg));
}

}  // namespace
}  // namespace tandem::resources::rtnl
