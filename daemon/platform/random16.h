#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace tandem::platform {

// Fills n bytes with random ones; false when the generator failed.
using FillRandom = std::function<bool(uint8_t* out, size_t n)>;

enum class RandomSource { kOpenSsl, kKernel, kClock };

struct Random16 {
  uint16_t value = 0;
  RandomSource source = RandomSource::kOpenSsl;
};

// The platform's 16 random bits (an incarnation's low bits, the spread of the first health
// checks): from OpenSSL's generator; when it fails (RAND_bytes returns 0, an unseeded or broken
// provider), from the kernel's (getrandom); when both fail, from the clock's low bits. These
// values spread timers and tell runs apart: a weaker one must not stop a director, and the
// caller says once that it fell back. Pure: the generators and the clock are handed in.
Random16 random16From(const FillRandom& openssl, const FillRandom& kernel, uint64_t clock_ns);

}  // namespace tandem::platform
