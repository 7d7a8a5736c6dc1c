// What both netlink codecs share (resources/netlink/netlink_message.h): the reply walk, the
// NLMSG_DONE errno, an ack's errno as an Error, and the request builder.
#include "netlink/netlink_message.h"

#include <gtest/gtest.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace tandem::resources::netlink {
namespace {

// A message of `type` with `payload` bytes after its header (the length as given, or the real one).
std::vector<uint8_t> message(uint16_t type, std::vector<uint8_t> payload, uint32_t len = 0) {
  nlmsghdr h{};
  h.nlmsg_len = len != 0 ? len : static_cast<uint32_t>(sizeof h + payload.size());
  h.nlmsg_type = type;
  std::vector<uint8_t> out(sizeof h);
  std::memcpy(out.data(), &h, sizeof h);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::vector<uint8_t> intPayload(int v) {
  std::vector<uint8_t> out(sizeof v);
  std::memcpy(out.data(), &v, sizeof v);
  return out;
}

TEST(NetlinkMessage, TheWalkGivesEachMessageWithItsOffset) {
  auto bytes = message(NLMSG_NOOP, {});
  auto second = message(NLMSG_DONE, intPayload(0));
  bytes.insert(bytes.end(), second.begin(), second.end());
  std::vector<std::pair<uint16_t, size_t>> seen;
  auto r = forEachMessage(bytes, [&](const nlmsghdr* nlh, size_t at) -> Result<void> {
    seen.emplace_back(nlh->nlmsg_type, at);
    return {};
  });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(seen, (std::vector<std::pair<uint16_t, size_t>>{{NLMSG_NOOP, 0}, {NLMSG_DONE, 16}}));
}

TEST(NetlinkMessage, TheWalkRefusesAMessageThatClaimsMoreThanTheBufferHolds) {
  auto bytes = message(NLMSG_NOOP, {});
  for (uint32_t len : {21U, 0xfffffffcU, 15U}) {  // past the end; negative as an int; < a header
    auto bad = message(NLMSG_DONE, intPayload(0), len);
    auto all = bytes;
    all.insert(all.end(), bad.begin(), bad.end());
    int calls = 0;
    auto r = forEachMessage(all, [&](const nlmsghdr*, size_t) -> Result<void> {
      ++calls;
      return {};
    });
    ASSERT_FALSE(r) << len;
    EXPECT_EQ(r.error().code, ErrorCode::kParse);
    EXPECT_EQ(r.error().message, "truncated netlink message at byte 16") << len;
    EXPECT_EQ(calls, 1) << len;
  }
  // Bytes left over that are not even a header.
  bytes.resize(bytes.size() + 4);
  EXPECT_FALSE(forEachMessage(bytes, [](const nlmsghdr*, size_t) -> Result<void> { return {}; }));
}

TEST(NetlinkMessage, TheWalkStopsAtTheDecodersFirstFailure) {
  auto bytes = message(NLMSG_NOOP, {});
  auto again = bytes;
  bytes.insert(bytes.end(), again.begin(), again.end());
  int calls = 0;
  auto r = forEachMessage(bytes, [&](const nlmsghdr*, size_t) -> Result<void> {
    ++calls;
    return fail(ErrorCode::kParse, "no");
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "no");
  EXPECT_EQ(calls, 1);
}

TEST(NetlinkMessage, DoneCarriesTheErrnoOfADumpThatFailedPartWay) {
  auto done = [](std::vector<uint8_t> payload) {
    auto bytes = message(NLMSG_DONE, std::move(payload));
    std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    return doneError(reinterpret_cast<const nlmsghdr*>(aligned.data()));
  };
  EXPECT_EQ(done(intPayload(-EINTR)), EINTR);
  EXPECT_EQ(done(intPayload(0)), 0);
  EXPECT_EQ(done(intPayload(-5000)), 0);  // not an errno
  EXPECT_EQ(done(intPayload(7)), 0);
  EXPECT_EQ(done({}), 0);  // an old kernel's empty NLMSG_DONE
}

TEST(NetlinkMessage, AnAcksErrnoTakesTheFamilysCodeAndTheKernelsText) {
  const auto codes = {std::pair{EEXIST, ErrorCode::kAlreadyExists}};
  Error exists = ackError(EEXIST, "cannot add x", "", codes);
  EXPECT_EQ(exists.code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(exists.message.rfind("cannot add x", 0), 0u) << exists.message;
  Error busy = ackError(EBUSY, "cannot add x", "Device busy", {});
  EXPECT_EQ(busy.code, ErrorCode::kTryAgain);
  EXPECT_NE(busy.message.find(" (kernel: Device busy)"), std::string::npos) << busy.message;
  EXPECT_EQ(ackError(EINVAL, "w", "", codes).code, errnoError(EINVAL, "w").code);
}

TEST(NetlinkMessage, ACopiedRequestIsTheSameRequest) {
  RequestBuilder b(NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, 42);
  *b.extra<uint32_t>() = 0x01020304;
  RequestBuilder copy = b;
  b.extra<uint32_t>();  // the original grows; the copy does not follow it
  const auto bytes = copy.bytes();
  ASSERT_EQ(bytes.size(), sizeof(nlmsghdr) + 4);
  EXPECT_EQ(copy.nlh()->nlmsg_seq, 42u);
  EXPECT_EQ(copy.nlh()->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(b.bytes().size(), sizeof(nlmsghdr) + 8);
}

}  // namespace
}  // namespace tandem::resources::netlink
