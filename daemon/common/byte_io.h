#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

// Big-endian (network order) writing and bounds-checked reading of byte buffers, and the
// Internet checksum: what the wire frames, the ICMP echoes and the ARP/ND frames are built from.
namespace tandem {

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
  // Zeros up to n bytes in all (nothing when it is that long already).
  void padTo(size_t n) {
    if (out_.size() < n) out_.resize(n, 0);
  }

  size_t size() const { return out_.size(); }
  // What was written so far, to fill in a field afterwards (a checksum).
  Bytes& buffer() { return out_; }
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

// The Internet checksum (RFC 1071) in two steps, so that a pseudo-header can go in first: add
// each part's 16-bit big-endian words (a part of odd length is padded with a zero byte), then
// fold and complement. Over a message whose checksum field is filled in, it yields 0.
inline uint32_t checksumAdd(uint32_t sum, ByteView bytes) {
  for (size_t i = 0; i < bytes.size(); i += 2) {
    const uint32_t hi = bytes[i];
    const uint32_t lo = i + 1 < bytes.size() ? bytes[i + 1] : 0;
    sum += (hi << 8) | lo;
    sum = (sum & 0xffff) + (sum >> 16);  // fold as we go: no overflow, whatever the length
  }
  return sum;
}
inline uint16_t checksumFinish(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffff);
}
inline uint16_t internetChecksum(ByteView bytes) { return checksumFinish(checksumAdd(0, bytes)); }

}  // namespace tandem
