#pragma once

#include <linux/netlink.h>

#include <string>

#include "common/result.h"

// The one NLMSG_ERROR decoder of rtnetlink and generic netlink alike: pure code over a message
// whose header libmnl has already checked to lie within the buffer.
namespace tandem::resources::netlink {

struct Ack {
  int error = 0;               // 0 for a plain ack, else the positive errno
  std::string kernel_message;  // the extended ack's text (NLMSGERR_ATTR_MSG), if any
};

// Refuses (kParse) a message shorter than its nlmsgerr, an error outside -4095..0 (an errno is
// at most MAX_ERRNO, and INT_MIN would not even negate), an echoed request that claims more than
// the message holds, and malformed extended-ack attributes.
[[nodiscard]] Result<Ack> decodeAck(const nlmsghdr* nlh);

}  // namespace tandem::resources::netlink
