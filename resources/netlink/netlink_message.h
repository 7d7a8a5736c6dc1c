#pragma once

#include <linux/netlink.h>

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/result.h"
#include "netlink/netlink_ack.h"

// What both netlink codecs (rtnetlink for VIPs and routes, generic netlink for IPVS) share: the
// request builder, the walk over a reply buffer, NLMSG_DONE and NLMSG_ERROR, and an ack's errno
// as an Error. Pure code over libmnl's message helpers; the families' own parts stay in their
// codecs.
namespace tandem::resources::netlink {

// Large enough for any request tandem builds (the longest, an IPVS destination op, is 168 bytes;
// an IPv6 route 72).
inline constexpr size_t kRequestBuffer = 512;

// A request under construction: its netlink header set, then the family's header (extra<T>())
// and attributes (libmnl's mnl_attr_put* on nlh()).
class RequestBuilder {
 public:
  RequestBuilder(uint16_t type, uint16_t flags, uint32_t seq);
  template <typename T>
  T* extra() {
    return static_cast<T*>(putExtra(sizeof(T)));
  }
  nlmsghdr* nlh() { return reinterpret_cast<nlmsghdr*>(buf_.data()); }
  const nlmsghdr* nlh() const { return reinterpret_cast<const nlmsghdr*>(buf_.data()); }
  std::vector<uint8_t> bytes() const;

 private:
  void* putExtra(size_t size);
  alignas(nlmsghdr) std::array<char, kRequestBuffer> buf_{};
};

// Walks the messages of a reply buffer as read from the socket, each one checked to lie within
// the buffer first (not with mnl_nlmsg_ok(), which compares (int)nlmsg_len with the length left,
// so that a length of 0xfffffffc passes as -4: found by kernel_reply_fuzz). The bytes are copied
// to 8-byte aligned storage, for the netlink macros read 32- and 64-bit fields in place.
// decode(nlh, at) gets each message and its offset; its first failure ends the walk, as does a
// truncated message (kParse, naming the byte).
Result<void> forEachMessage(std::span<const uint8_t> bytes,
                            const std::function<Result<void>(const nlmsghdr*, size_t)>& decode);

// The header fields every decoded message of both families keeps.
template <typename M>
void copyHeader(const nlmsghdr* nlh, M& m) {
  m.type = nlh->nlmsg_type;
  m.flags = nlh->nlmsg_flags;
  m.seq = nlh->nlmsg_seq;
  m.pid = nlh->nlmsg_pid;
  m.dump_interrupted = (nlh->nlmsg_flags & NLM_F_DUMP_INTR) != 0;
}

// The errno that a NLMSG_DONE carries when its dump failed part way; 0 when it did not.
int doneError(const nlmsghdr* nlh);

// A NLMSG_ERROR into a family's message: kind kAck, the errno (0 for a plain ack) and the
// kernel's text from the extended ack.
template <typename M>
Result<void> decodeAckInto(const nlmsghdr* nlh, M& m) {
  auto ack = decodeAck(nlh);
  if (!ack) return fail(ack.error());
  m.kind = M::Kind::kAck;
  m.error = ack->error;
  m.kernel_message = std::move(ack->kernel_message);
  return {};
}

// An ack's errno as the Error of `what`: errno's words, the code that `codes` gives the errno
// (else errnoError's), EBUSY as kTryAgain for both families, and the kernel's text when it sent
// one.
Error ackError(int err, std::string_view what, std::string_view kernel_message,
               std::initializer_list<std::pair<int, ErrorCode>> codes);

}  // namespace tandem::resources::netlink
