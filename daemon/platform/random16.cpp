#include "platform/random16.h"

namespace tandem::platform {

Random16 random16From(const FillRandom& openssl, const FillRandom& kernel, uint64_t clock_ns) {
  uint8_t bytes[2] = {};
  if (openssl && openssl(bytes, sizeof bytes)) {
    return {static_cast<uint16_t>(bytes[0] << 8 | bytes[1]), RandomSource::kOpenSsl};
  }
  if (kernel && kernel(bytes, sizeof bytes)) {
    return {static_cast<uint16_t>(bytes[0] << 8 | bytes[1]), RandomSource::kKernel};
  }
  // The nanoseconds change fastest; folding in the microseconds keeps two calls in the same
  // tick of a coarse clock apart only by chance, which is all a last resort can offer.
  return {static_cast<uint16_t>(clock_ns ^ (clock_ns >> 16) ^ (clock_ns >> 32)),
          RandomSource::kClock};
}

}  // namespace tandem::platform
