#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/ip_address.h"

// DNS messages built by hand for the dns tests, byte by byte as RFC 1035 lays them out, so that
// a test can make any reply, well formed or not, without a DNS library.
namespace tandem::test::dns {

using Bytes = std::vector<uint8_t>;

inline void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}

inline void putName(Bytes& b, std::string_view dotted) {
  while (!dotted.empty()) {
    const size_t dot = dotted.find('.');
    const std::string_view label = dotted.substr(0, dot);
    b.push_back(static_cast<uint8_t>(label.size()));
    b.insert(b.end(), label.begin(), label.end());
    dotted = dot == std::string_view::npos ? std::string_view() : dotted.substr(dot + 1);
  }
  b.push_back(0);
}

// RDATA for the common types.
inline Bytes address(std::string_view text) {
  IpAddress a = *IpAddress::parse(text);
  return Bytes(a.bytes.begin(), a.bytes.begin() + (a.family == Family::kInet ? 4 : 16));
}
inline Bytes mx(uint16_t preference, std::string_view exchange) {
  Bytes b;
  put16(b, preference);
  putName(b, exchange);
  return b;
}
inline Bytes txt(const std::vector<std::string>& strings) {
  Bytes b;
  for (const auto& s : strings) {
    b.push_back(static_cast<uint8_t>(s.size()));
    b.insert(b.end(), s.begin(), s.end());
  }
  return b;
}
inline Bytes name(std::string_view dotted) {
  Bytes b;
  putName(b, dotted);
  return b;
}

struct Record {
  uint16_t type;
  Bytes data;
};

// A reply to (qname, qtype) with id and rcode: the question repeated, then each answer record
// named by a pointer to the question's name, as servers compress it. qr false makes it a query.
inline Bytes reply(uint16_t id, int rcode, std::string_view qname, uint16_t qtype,
                   const std::vector<Record>& answers, bool qr = true, bool tc = false) {
  Bytes b;
  put16(b, id);
  b.push_back(static_cast<uint8_t>((qr ? 0x80 : 0) | (tc ? 0x02 : 0) | 0x01));  // RD
  b.push_back(static_cast<uint8_t>((qr ? 0x80 : 0) | (rcode & 0x0f)));          // RA in replies
  put16(b, 1);
  put16(b, static_cast<uint16_t>(answers.size()));
  put16(b, 0);
  put16(b, 0);
  putName(b, qname);
  put16(b, qtype);
  put16(b, 1);  // IN
  for (const auto& r : answers) {
    put16(b, 0xc00c);  // the question's name, at offset 12
    put16(b, r.type);
    put16(b, 1);
    put16(b, 0);
    put16(b, 300);  // ttl
    put16(b, static_cast<uint16_t>(r.data.size()));
    b.insert(b.end(), r.data.begin(), r.data.end());
  }
  return b;
}

// The id of a query (or reply).
inline uint16_t idOf(const Bytes& m) { return static_cast<uint16_t>(m[0] << 8 | m[1]); }

}  // namespace tandem::test::dns
