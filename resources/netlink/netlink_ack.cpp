#include "netlink/netlink_ack.h"

#include <libmnl/libmnl.h>

#include <cstring>

namespace tandem::resources::netlink {

Result<Ack> decodeAck(const nlmsghdr* nlh) {
  if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(nlmsgerr)) {
    return fail(ErrorCode::kParse, "NLMSG_ERROR shorter than its nlmsgerr");
  }
  const auto* e = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(nlh));
  if (e->error > 0 || e->error < -4095) {
    return fail(ErrorCode::kParse, "NLMSG_ERROR with an error outside -4095..0");
  }
  Ack ack;
  ack.error = -e->error;
  if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) == 0) return ack;
  // The extended ack's attributes follow the echoed request: its header alone when capped, all
  // of it otherwise.
  size_t offset = sizeof(nlmsgerr);
  if ((nlh->nlmsg_flags & NLM_F_CAPPED) == 0) {
    if (e->msg.nlmsg_len < sizeof(nlmsghdr)) return fail(ErrorCode::kParse, "bad echoed request");
    offset += MNL_ALIGN(e->msg.nlmsg_len) - sizeof(nlmsghdr);
  }
  if (MNL_NLMSG_HDRLEN + offset > nlh->nlmsg_len) {
    return fail(ErrorCode::kParse, "NLMSG_ERROR shorter than its echoed request");
  }
  const auto* at = static_cast<const char*>(mnl_nlmsg_get_payload_offset(nlh, offset));
  const auto* end = static_cast<const char*>(mnl_nlmsg_get_payload_tail(nlh));
  while (end - at > 0) {
    const auto* a = reinterpret_cast<const nlattr*>(at);
    if (!mnl_attr_ok(a, static_cast<int>(end - at))) {
      return fail(ErrorCode::kParse, "malformed extended ack");
    }
    if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG) {
      const char* p = static_cast<const char*>(mnl_attr_get_payload(a));
      ack.kernel_message.assign(p, strnlen(p, mnl_attr_get_payload_len(a)));
    }
    at = reinterpret_cast<const char*>(mnl_attr_next(a));
  }
  return ack;
}

}  // namespace tandem::resources::netlink
