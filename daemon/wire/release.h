#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/byte_io.h"
#include "common/result.h"
#include "wire/rejection.h"

// The payload of a release frame, a planned handover. Either a node asks the active one to
// step down ("please release", target = the node asked), or the active one announces that it
// has let go ("released, you may take over", target = the node it hands to, or empty for
// whichever peer the election picks). Network byte order:
//
//   offset  size  field
//        0     1  kind (ReleaseKind)
//        1     1  T = target length, 0..64
//        2     T  target node name
//      2+T     8  election epoch the sender acts in; a release from an older epoch is stale
//     10+T     -  nothing in v1; longer payloads are accepted and the tail ignored, as for
//                 heartbeats. A shorter payload is rejected.
namespace tandem::wire {

enum class ReleaseKind : uint8_t { kRequest = 1, kReleased = 2 };

std::string_view releaseKindName(ReleaseKind k);  // "request", "released"

inline constexpr size_t kReleaseMinBytes = 10;

struct Release {
  ReleaseKind kind = ReleaseKind::kRequest;
  std::string target;
  uint64_t epoch = 0;

  friend bool operator==(const Release&, const Release&) = default;
};

// Fails (invalid-argument) for an unknown kind or a target longer than a node name.
Result<Bytes> encodeRelease(const Release& rel);

// bad_payload for a payload shorter than its fields, an unknown kind or a target longer than a
// node name.
Checked<Release> decodeRelease(ByteView payload);

}  // namespace tandem::wire
