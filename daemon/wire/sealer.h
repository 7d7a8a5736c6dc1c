#pragma once

#include <cstdint>
#include <string>

#include "common/byte_io.h"
#include "common/result.h"
#include "wire/frame.h"
#include "wire/heartbeat.h"
#include "wire/incarnation.h"
#include "wire/key_ring.h"
#include "wire/release.h"

// The sending half: one run's identity and sequence counter. Pure; the caller supplies the
// incarnation (from its clock and a random source, see makeIncarnation) and sends the bytes.
namespace tandem::wire {

class FrameSealer {
 public:
  FrameSealer(std::string cluster, std::string node, uint64_t incarnation,
              uint64_t first_sequence = 0);

  // Each call takes a new sequence number, consumed only when sealing succeeds. Seal the CPG
  // and the UDP copy of a message separately: with distinct sequence numbers both are accepted,
  // and a copy arriving twice is a real replay (or a network duplicate), not the second path.
  Result<Bytes> seal(FrameType type, ByteView payload, const KeyRing& keys);
  Result<Bytes> sealHeartbeat(const Heartbeat& hb, const KeyRing& keys);
  Result<Bytes> sealRelease(const Release& rel, const KeyRing& keys);

  uint64_t incarnation() const { return incarnation_; }
  uint64_t nextSequence() const { return next_sequence_; }

 private:
  std::string cluster_;
  std::string node_;
  uint64_t incarnation_;
  uint64_t next_sequence_;
};

}  // namespace tandem::wire
