// Where the platform's random bits come from when a generator fails (issue 12: RAND_bytes
// failures are handled): the kernel's generator, then the clock, never an unset value.
#include "platform/random16.h"

#include <gtest/gtest.h>

namespace tandem::platform {
namespace {

FillRandom bytes(uint8_t a, uint8_t b) {
  return [a, b](uint8_t* out, size_t n) {
    EXPECT_EQ(n, 2u);
    out[0] = a;
    out[1] = b;
    return true;
  };
}
const FillRandom kFails = [](uint8_t*, size_t) { return false; };

TEST(Random16, ComesFromOpenSslWhenItWorks) {
  Random16 r = random16From(bytes(0x12, 0x34), bytes(0x56, 0x78), 0);
  EXPECT_EQ(r.value, 0x1234);
  EXPECT_EQ(r.source, RandomSource::kOpenSsl);
}

TEST(Random16, AFailingOpenSslFallsBackToTheKernel) {
  Random16 r = random16From(kFails, bytes(0x56, 0x78), 0);
  EXPECT_EQ(r.value, 0x5678);
  EXPECT_EQ(r.source, RandomSource::kKernel);
}

TEST(Random16, BothFailingFallsBackToTheClock) {
  Random16 a = random16From(kFails, kFails, 1'000'000'123);
  Random16 b = random16From(kFails, kFails, 1'000'000'456);
  EXPECT_EQ(a.source, RandomSource::kClock);
  EXPECT_NE(a.value, b.value) << "two moments give two values";
}

}  // namespace
}  // namespace tandem::platform
