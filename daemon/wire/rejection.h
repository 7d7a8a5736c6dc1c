#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "common/result.h"

// Why an incoming frame was dropped. The names are stable: they are counter labels and log
// values (reason=bad_signature), so add new reasons at the end and never rename one.
namespace tandem::wire {

enum class Rejection : uint8_t {
  kTruncated,         // the bytes end before a field does
  kBadMagic,          // not "TNDM": not a tandem frame at all
  kUnknownVersion,    // a tandem frame of a version this build does not speak
  kUnknownType,       // a v1 frame of a type this build does not know
  kUnknownKey,        // signed with a key id the ring does not hold
  kBadSignature,      // the MAC does not match: forged, corrupted, or the wrong secret
  kWrongCluster,      // addressed to another cluster (checked before the MAC, see frame.h)
  kUnknownNode,       // authentic, but the sender is not one of the configured peers
  kReplayed,          // this sequence was seen already or is behind the replay window
  kStaleIncarnation,  // from an earlier run of the sender than one already heard
  kOversized,         // longer than any frame, a length field past its limit, or trailing bytes
  kBadPayload,        // authentic, but the payload does not decode for its type
  kSenderMismatch,    // authentic, but it names a node other than the one it came from
  kSuperseded,        // authentic and new, but older than a frame already taken from its sender
};

inline constexpr size_t kRejectionCount = 14;

inline constexpr std::array<Rejection, kRejectionCount> kAllRejections = {
    Rejection::kTruncated,        Rejection::kBadMagic,    Rejection::kUnknownVersion,
    Rejection::kUnknownType,      Rejection::kUnknownKey,  Rejection::kBadSignature,
    Rejection::kWrongCluster,     Rejection::kUnknownNode, Rejection::kReplayed,
    Rejection::kStaleIncarnation, Rejection::kOversized,   Rejection::kBadPayload,
    Rejection::kSenderMismatch,   Rejection::kSuperseded,
};

// "truncated", "bad_magic", ... as listed above in snake_case.
std::string_view name(Rejection r);

// A decoded value or the reason there is none: a Result whose failure is a Rejection, as a frame
// from the network failing is data to count, not an error to report.
template <typename T>
using Checked = Result<T, Rejection>;

// What a receiver did with the frames it was handed, for `tandem status` and the metrics.
struct FrameCounters {
  uint64_t accepted = 0;
  std::array<uint64_t, kRejectionCount> rejected{};

  void count(Rejection r) { ++rejected[static_cast<size_t>(r)]; }
  uint64_t of(Rejection r) const { return rejected[static_cast<size_t>(r)]; }
  uint64_t rejectedTotal() const;
};

}  // namespace tandem::wire
