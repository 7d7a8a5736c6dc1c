#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>

#include "common/byte_io.h"
#include "common/result.h"

// The shared secrets that sign and verify frames. Several keys can be held at once so that a
// cluster can rotate without a flag day: every node first learns the new key (verifies with
// both), then each switches its active key, then the old one is removed.
namespace tandem::wire {

inline constexpr size_t kMacBytes = 32;  // HMAC-SHA256
using Mac = std::array<uint8_t, kMacBytes>;

// Secret bytes in one fixed allocation, wiped when dropped. Move-only, and never resized, so no
// stray copy is left behind in freed memory by a reallocation.
class SecretKey {
 public:
  explicit SecretKey(ByteView bytes);
  ~SecretKey();
  SecretKey(SecretKey&& other) noexcept;
  SecretKey& operator=(SecretKey&& other) noexcept;
  SecretKey(const SecretKey&) = delete;
  SecretKey& operator=(const SecretKey&) = delete;

  ByteView bytes() const { return {data_.get(), size_}; }

 private:
  void wipe();

  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0;
};

class KeyRing {
 public:
  // The same bounds as the config loader puts on key files.
  static constexpr size_t kMinSecretBytes = 16;
  static constexpr size_t kMaxSecretBytes = 4096;
  // Key id 0 is never valid (config ids are 1..65535); activeId() returns it for "none".
  static constexpr uint16_t kNoKey = 0;

  // Copies the secret; the caller should wipe its own buffer (OPENSSL_cleanse) afterwards.
  // The first key added becomes the active one.
  Result<void> add(uint16_t id, ByteView secret);
  Result<void> setActive(uint16_t id);
  // Refuses to remove the active key: a ring that cannot sign is never what rotation wants.
  Result<void> remove(uint16_t id);

  uint16_t activeId() const { return active_; }
  bool contains(uint16_t id) const { return keys_.count(id) != 0; }
  size_t size() const { return keys_.size(); }

  // HMAC-SHA256 of data under key id. Fails only for an unknown id or an OpenSSL failure.
  Result<Mac> mac(uint16_t id, ByteView data) const;
  Result<Mac> sign(ByteView data) const { return mac(active_, data); }
  // Recomputes and compares in constant time, so the time taken says nothing about how many
  // leading bytes of a forged MAC were right.
  bool verify(uint16_t id, ByteView data, ByteView mac) const;

 private:
  std::map<uint16_t, SecretKey> keys_;
  uint16_t active_ = kNoKey;
};

}  // namespace tandem::wire
