#pragma once

#include <cstdint>

#include "wire/key_ring.h"

// The key ring the wire fuzz targets sign and verify with: the unit tests' keys
// (test/wire/wire_test_util.h), which signed the seeds in corpus/wire.
namespace tandem::fuzz {

inline const wire::KeyRing& testRing() {
  static constexpr uint8_t kKey1[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                      11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                      22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
  static constexpr char kKey2[] = "tandem-golden-key-number-two!!";
  static const wire::KeyRing* r = [] {
    auto* k = new wire::KeyRing;
    if (!k->add(1, ByteView(kKey1)) || !k->add(2, asBytes(kKey2))) __builtin_trap();
    return k;
  }();
  return *r;
}

}  // namespace tandem::fuzz
