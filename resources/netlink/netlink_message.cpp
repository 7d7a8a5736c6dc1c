#include "netlink/netlink_message.h"

#include <libmnl/libmnl.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace tandem::resources::netlink {

RequestBuilder::RequestBuilder(uint16_t type, uint16_t flags, uint32_t seq) {
  nlmsghdr* h = mnl_nlmsg_put_header(buf_.data());
  h->nlmsg_type = type;
  h->nlmsg_flags = flags;
  h->nlmsg_seq = seq;
  h->nlmsg_pid = 0;
}

void* RequestBuilder::putExtra(size_t size) { return mnl_nlmsg_put_extra_header(nlh(), size); }

std::vector<uint8_t> RequestBuilder::bytes() const {
  const auto* p = reinterpret_cast<const uint8_t*>(nlh());
  return std::vector<uint8_t>(p, p + nlh()->nlmsg_len);
}

Result<void> forEachMessage(std::span<const uint8_t> bytes,
                            const std::function<Result<void>(const nlmsghdr*, size_t)>& decode) {
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  if (!bytes.empty()) std::memcpy(aligned.data(), bytes.data(), bytes.size());
  const auto* nlh = reinterpret_cast<const nlmsghdr*>(aligned.data());
  int left = static_cast<int>(bytes.size());
  while (left > 0) {
    const size_t at = bytes.size() - static_cast<size_t>(left);
    if (left < static_cast<int>(sizeof(nlmsghdr)) || nlh->nlmsg_len < sizeof(nlmsghdr) ||
        nlh->nlmsg_len > static_cast<uint32_t>(left)) {
      return fail(ErrorCode::kParse, "truncated netlink message at byte " + std::to_string(at));
    }
    if (auto r = decode(nlh, at); !r) return r;
    nlh = mnl_nlmsg_next(nlh, &left);
  }
  return {};
}

int doneError(const nlmsghdr* nlh) {
  if (mnl_nlmsg_get_payload_len(nlh) < sizeof(int)) return 0;
  int v = 0;
  std::memcpy(&v, mnl_nlmsg_get_payload(nlh), sizeof(v));
  return v < 0 && v >= -4095 ? -v : 0;
}

Error ackError(int err, std::string_view what, std::string_view kernel_message,
               std::initializer_list<std::pair<int, ErrorCode>> codes) {
  Error e = errnoError(err, what);
  if (err == EBUSY) e.code = ErrorCode::kTryAgain;
  for (const auto& [code_errno, code] : codes) {
    if (code_errno == err) e.code = code;
  }
  if (!kernel_message.empty()) e.message += " (kernel: " + std::string(kernel_message) + ")";
  return e;
}

}  // namespace tandem::resources::netlink
