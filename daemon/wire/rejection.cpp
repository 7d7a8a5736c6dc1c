#include "wire/rejection.h"

#include <numeric>

namespace tandem::wire {

std::string_view name(Rejection r) {
  switch (r) {
    case Rejection::kTruncated:
      return "truncated";
    case Rejection::kBadMagic:
      return "bad_magic";
    case Rejection::kUnknownVersion:
      return "unknown_version";
    case Rejection::kUnknownType:
      return "unknown_type";
    case Rejection::kUnknownKey:
      return "unknown_key";
    case Rejection::kBadSignature:
      return "bad_signature";
    case Rejection::kWrongCluster:
      return "wrong_cluster";
    case Rejection::kUnknownNode:
      return "unknown_node";
    case Rejection::kReplayed:
      return "replayed";
    case Rejection::kStaleIncarnation:
      return "stale_incarnation";
    case Rejection::kOversized:
      return "oversized";
    case Rejection::kBadPayload:
      return "bad_payload";
    case Rejection::kSenderMismatch:
      return "sender_mismatch";
    case Rejection::kSuperseded:
      return "superseded";
  }
  return "unknown";
}

uint64_t FrameCounters::rejectedTotal() const {
  return std::accumulate(rejected.begin(), rejected.end(), uint64_t{0});
}

}  // namespace tandem::wire
