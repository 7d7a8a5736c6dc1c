#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

// Big-endian (network order) writing and bounds-checked reading of byte buffers, the only place
// in the wire module that touches raw offsets.
namespace tandem::wire {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;

inline ByteView asBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline std::string_view asText(ByteView b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

class ByteWriter {
 public:
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) {
    u8(static_cast<uint8_t>(v >> 8));
    u8(static_cast<uint8_t>(v));
  }
  void u32(uint32_t v) {
    u16(static_cast<uint16_t>(v >> 16));
    u16(static_cast<uint16_t>(v));
  }
  void u64(uint64_t v) {
    u32(static_cast<uint32_t>(v >> 32));
    u32(static_cast<uint32_t>(v));
  }
  void bytes(ByteView b) { out_.insert(out_.end(), b.begin(), b.end()); }

  Bytes take() && { return std::move(out_); }

 private:
  Bytes out_;
};

// Reads never run past the end: a read that does not fit returns zeros (or an empty view) and
// marks the reader short, so a decoder can read a run of fixed fields and check once. Any
// decision taken on a value (a length, a version) must check ok() first.
class ByteReader {
 public:
  explicit ByteReader(ByteView in) : in_(in) {}

  uint8_t u8() { return static_cast<uint8_t>(take(1)); }
  uint16_t u16() { return static_cast<uint16_t>(take(2)); }
  uint32_t u32() { return static_cast<uint32_t>(take(4)); }
  uint64_t u64() { return take(8); }
  ByteView bytes(size_t n) {
    if (n > remaining()) {
      short_ = true;
      pos_ = in_.size();
      return {};
    }
    ByteView b = in_.subspan(pos_, n);
    pos_ += n;
    return b;
  }

  bool ok() const { return !short_; }
  size_t remaining() const { return in_.size() - pos_; }

 private:
  uint64_t take(size_t n) {
    ByteView b = bytes(n);
    uint64_t v = 0;
    for (uint8_t byte : b) v = (v << 8) | byte;
    return v;
  }

  ByteView in_;
  size_t pos_ = 0;
  bool short_ = false;
};

}  // namespace tandem::wire
