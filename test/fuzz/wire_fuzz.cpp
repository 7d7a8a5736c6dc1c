// libFuzzer target: any bytes given to the wire decoder, the verifier, the receiver pipeline and
// the payload decoders end in a value or a Rejection, never in a crash, a hang or a sanitizer
// report, and what is accepted re-encodes to the same bytes.
//
// Random bytes almost never carry a valid MAC, so each input is also re-signed with the key it
// names when it parses: that takes the fuzzer past the signature check into the cluster, peer,
// payload and replay logic. The seeds in corpus/wire are valid frames signed with kKey1/kKey2.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <variant>

#include "fuzz_keys.h"
#include "wire/frame.h"
#include "wire/heartbeat.h"
#include "wire/key_ring.h"
#include "wire/receiver.h"
#include "wire/release.h"
#include "wire/replay_guard.h"

namespace {

using namespace tandem;        // NOLINT: a fuzz target, one function
using namespace tandem::wire;  // NOLINT

const auto& ring = tandem::fuzz::testRing;

const NodeSet& peers() {
  static const NodeSet* p = new NodeSet{"lb1", "lb2"};
  return *p;
}

void checkPayloadDecoders(ByteView b) {
  if (Checked<Heartbeat> hb = decodeHeartbeat(b)) {
    auto again = encodeHeartbeat(*hb);
    // A payload from an older sender lacks the move and sync fields; the re-encoding has them.
    if (!again || again->size() > b.size() + kHeartbeatTailBytes) __builtin_trap();
    Checked<Heartbeat> back = decodeHeartbeat(*again);
    if (!back || !(*back == *hb)) __builtin_trap();
  }
  if (Checked<Release> rel = decodeRelease(b)) {
    auto again = encodeRelease(*rel);
    if (!again || again->size() > b.size()) __builtin_trap();
    Checked<Release> back = decodeRelease(*again);
    if (!back || !(*back == *rel)) __builtin_trap();
  }
}

// A receiver fed the frame twice must accept it at most once, and count every call.
void checkReceiver(ByteView b) {
  FrameReceiver rx("web", peers());
  Checked<Message> first = rx.receive(b, ring());
  Checked<Message> second = rx.receive(b, ring());
  if (second) __builtin_trap();
  if (first && second.error() != Rejection::kReplayed) __builtin_trap();
  const FrameCounters& c = rx.counters();
  if (c.accepted + c.rejectedTotal() != 2) __builtin_trap();
  if (first && first->frame.type == FrameType::kHeartbeat &&
      !std::holds_alternative<Heartbeat>(first->body)) {
    __builtin_trap();
  }
}

// The replay window against the plainest statement of its rule, with the input read as a
// stream of (incarnation, sequence) arrivals from one sender: 3 bytes each, the first choosing
// an older, the same or a newer incarnation and the size of the jump, the other two a signed
// offset from the highest sequence so far.
class ReplayModel {
 public:
  std::optional<Rejection> admit(uint64_t incarnation, uint64_t sequence) {
    if (!any_ || incarnation > incarnation_) {
      any_ = true;
      incarnation_ = incarnation;
      top_ = sequence;
      seen_ = {sequence};
      return std::nullopt;
    }
    if (incarnation < incarnation_) return Rejection::kStaleIncarnation;
    if (sequence <= top_ && (top_ - sequence >= kReplayWindow || seen_.count(sequence) != 0)) {
      return Rejection::kReplayed;
    }
    if (sequence > top_) top_ = sequence;
    seen_.insert(sequence);
    return std::nullopt;
  }
  uint64_t incarnation() const { return incarnation_; }
  uint64_t top() const { return top_; }

 private:
  bool any_ = false;
  uint64_t incarnation_ = 0;
  uint64_t top_ = 0;
  std::set<uint64_t> seen_;
};

uint64_t addClamped(uint64_t base, int64_t delta) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (delta < 0) {
    uint64_t down = static_cast<uint64_t>(-(delta + 1)) + 1;
    return down > base ? 0 : base - down;
  }
  uint64_t up = static_cast<uint64_t>(delta);
  return up > kMax - base ? kMax : base + up;
}

void checkReplayGuardAgainstModel(ByteView in) {
  ReplayGuard guard;
  ReplayModel model;
  for (size_t i = 0; i + 3 <= in.size(); i += 3) {
    uint8_t how = in[i];
    auto offset = static_cast<int16_t>(static_cast<uint16_t>(in[i + 1] << 8 | in[i + 2]));
    uint64_t incarnation = model.incarnation();
    if (how % 3 == 0) incarnation = addClamped(incarnation, -1 - (how >> 6));
    if (how % 3 == 2) incarnation = addClamped(incarnation, 1 + (how >> 6));
    // Bit 5: a jump far past the window (offsets in units of 2^40).
    int64_t delta = (how & 0x20) != 0 ? int64_t{offset} * (int64_t{1} << 40) : int64_t{offset};
    uint64_t sequence = addClamped(model.top(), delta);
    std::optional<Rejection> expected = model.admit(incarnation, sequence);
    if (guard.check("lb2", incarnation, sequence) != expected) __builtin_trap();
    if (guard.admit("lb2", incarnation, sequence) != expected) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView in(data, size);
  checkPayloadDecoders(in);
  checkReplayGuardAgainstModel(in);

  Checked<Frame> f = decodeFrame(in);
  if (!f) {
    // Structurally broken input can never get further.
    if (verifyFrame(in, ring(), "web", peers())) __builtin_trap();
    checkReceiver(in);
    return 0;
  }
  // Decoding is canonical: the fields give back exactly the signed bytes.
  tandem::Result<Bytes> unsigned_bytes = encodeUnsigned(*f);
  if (f->sender.empty() || f->cluster.empty()) {
    if (unsigned_bytes) __builtin_trap();  // the encoder must refuse what it cannot send
  } else if (!unsigned_bytes || *unsigned_bytes != Bytes(in.begin(), in.end() - kMacBytes)) {
    __builtin_trap();
  }
  checkPayloadDecoders(f->payload);
  checkReceiver(in);

  // Re-sign with the named key, if the ring holds it, to get past the MAC.
  if (!ring().contains(f->key_id)) return 0;
  Bytes resigned(in.begin(), in.end() - kMacBytes);
  tandem::Result<Mac> mac = ring().mac(f->key_id, resigned);
  if (!mac) __builtin_trap();
  resigned.insert(resigned.end(), mac->begin(), mac->end());
  Checked<Frame> v = verifyFrame(resigned, ring(), "web", peers());
  if (v) {
    if (f->cluster != "web" || !peers().contains(f->sender)) __builtin_trap();
  } else if (v.error() != Rejection::kWrongCluster && v.error() != Rejection::kUnknownNode) {
    __builtin_trap();  // a correctly signed, well-formed frame fails only on these
  }
  checkReceiver(resigned);
  return 0;
}
