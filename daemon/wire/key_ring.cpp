#include "wire/key_ring.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cstring>
#include <string>

namespace tandem::wire {

namespace {

struct MacDeleter {
  void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
};
struct MacCtxDeleter {
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};

Result<Mac> hmacSha256(ByteView key, ByteView data) {
  // Fetched per call rather than cached in a global: OpenSSL keeps its own method cache, and at
  // a few frames a second per peer the lookup does not matter.
  std::unique_ptr<EVP_MAC, MacDeleter> hmac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!hmac) return fail(ErrorCode::kInternal, "OpenSSL has no HMAC implementation");
  std::unique_ptr<EVP_MAC_CTX, MacCtxDeleter> ctx(EVP_MAC_CTX_new(hmac.get()));
  if (!ctx) return fail(ErrorCode::kInternal, "EVP_MAC_CTX_new failed");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  Mac out{};
  size_t out_len = 0;
  if (EVP_MAC_init(ctx.get(), key.data(), key.size(), params) != 1 ||
      EVP_MAC_update(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_MAC_final(ctx.get(), out.data(), &out_len, out.size()) != 1 || out_len != kMacBytes) {
    return fail(ErrorCode::kInternal, "HMAC-SHA256 failed");
  }
  return out;
}

}  // namespace

SecretKey::SecretKey(ByteView bytes)
    : data_(std::make_unique<uint8_t[]>(bytes.size())), size_(bytes.size()) {
  if (size_ != 0) std::memcpy(data_.get(), bytes.data(), size_);
}

SecretKey::~SecretKey() { wipe(); }

SecretKey::SecretKey(SecretKey&& other) noexcept
    : data_(std::move(other.data_)), size_(other.size_) {
  other.size_ = 0;
}

SecretKey& SecretKey::operator=(SecretKey&& other) noexcept {
  if (this != &other) {
    wipe();
    data_ = std::move(other.data_);
    size_ = other.size_;
    other.size_ = 0;
  }
  return *this;
}

void SecretKey::wipe() {
  if (data_ && size_ != 0) OPENSSL_cleanse(data_.get(), size_);
  data_.reset();
  size_ = 0;
}

Result<void> KeyRing::add(uint16_t id, ByteView secret) {
  if (id == kNoKey) return fail(ErrorCode::kInvalidArgument, "key id 0 is reserved");
  if (secret.size() < kMinSecretBytes || secret.size() > kMaxSecretBytes) {
    return fail(ErrorCode::kInvalidArgument,
                "key " + std::to_string(id) + " has " + std::to_string(secret.size()) +
                    " bytes; a key has " + std::to_string(kMinSecretBytes) + " to " +
                    std::to_string(kMaxSecretBytes));
  }
  if (!keys_.try_emplace(id, secret).second) {
    return fail(ErrorCode::kAlreadyExists, "key " + std::to_string(id) + " is already held");
  }
  if (active_ == kNoKey) active_ = id;
  return {};
}

Result<void> KeyRing::setActive(uint16_t id) {
  if (!contains(id)) return fail(ErrorCode::kNotFound, "no key " + std::to_string(id));
  active_ = id;
  return {};
}

Result<void> KeyRing::remove(uint16_t id) {
  if (!contains(id)) return fail(ErrorCode::kNotFound, "no key " + std::to_string(id));
  if (id == active_) {
    return fail(ErrorCode::kInvalidArgument,
                "key " + std::to_string(id) + " is the active key; activate another first");
  }
  keys_.erase(id);
  return {};
}

Result<Mac> KeyRing::mac(uint16_t id, ByteView data) const {
  auto it = keys_.find(id);
  if (it == keys_.end()) return fail(ErrorCode::kNotFound, "no key " + std::to_string(id));
  return hmacSha256(it->second.bytes(), data);
}

bool KeyRing::verify(uint16_t id, ByteView data, ByteView mac_bytes) const {
  if (mac_bytes.size() != kMacBytes) return false;
  Result<Mac> expected = mac(id, data);
  if (!expected) return false;
  return CRYPTO_memcmp(expected->data(), mac_bytes.data(), kMacBytes) == 0;
}

}  // namespace tandem::wire
