#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "config/config.h"

// What a DNS reply says, judged against a dns check: the pure half of the dns checker. It reads
// a message's header, question and answer sections (the authority and additional sections are
// never looked at), renders each answer record in its presentation form, and decides healthy or
// not with the reason an operator reads. Every length and pointer in the message is checked
// against the bytes received, so garbage fails with what is wrong with it, never a crash.
//
// The layout (RFC 1035 4.1): a 12-byte header
//   id(2) | QR opcode(4) AA TC RD | RA Z AD CD rcode(4) | qdcount(2) ancount(2) nscount(2)
//   arcount(2)
// then qdcount questions (name, type(2), class(2)) and ancount answer records (name, type(2),
// class(2), ttl(4), rdlength(2), rdata).
namespace tandem::resources::health {

// The record types and response codes a check names, as numbers on the wire. nullopt for a name
// the config loader does not accept either.
std::optional<uint16_t> dnsTypeCode(std::string_view name);
std::optional<int> dnsRcodeCode(std::string_view name);
// "NXDOMAIN"; "RCODE11" for one without a name.
std::string dnsRcodeName(int rcode);

struct DnsQuestion {
  std::string name;  // presentation form, no trailing dot ("." for the root)
  uint16_t type = 0;
  uint16_t klass = 0;
};

struct DnsReply {
  uint16_t id = 0;
  bool response = false;   // QR
  bool truncated = false;  // TC
  int rcode = 0;
  std::vector<DnsQuestion> questions;
  // Each answer record's data in presentation form: an address for A/AAAA, the name for CNAME,
  // NS and PTR, "preference exchange" for MX, the strings joined for TXT, "mname rname serial
  // refresh retry expire minimum" for SOA, "priority weight port target" for SRV, and RFC 3597's
  // "\# length hex" for any other type.
  std::vector<std::string> answers;
};

// Parses a whole DNS message. Fails (ErrorCode::kParse) saying what is wrong, in words that
// follow "garbage reply: ": "5 bytes, shorter than a DNS header", "answer 2 runs past the end".
Result<DnsReply> parseDnsReply(std::span<const uint8_t> message);

struct DnsVerdict {
  bool ok = false;
  std::string reason;  // "NOERROR, 1 answer", "rcode NXDOMAIN, expected NOERROR", ...
};

// A reply the resolver matched to the probe's query (same id and question), judged: healthy when
// its rcode is check.expect_rcode and, when check.expect_answer is set, one answer record
// contains that text.
DnsVerdict judgeDnsReply(std::span<const uint8_t> reply, const config::Check& check);

// A datagram from the server that the resolver did not take as the reply to the query with
// query_id (c-ares drops those silently, and would leave the probe to time out). nullopt when it
// is not the probe's to judge: another query's id (a stray or a forgery, which must not decide
// the probe), or a well-formed reply the resolver retries over TCP because it is truncated.
// Otherwise the verdict that ends the probe: a reply that leaves out the question (servers do,
// for FORMERR and REFUSED) judged by its rcode like any reply, anything else as garbage.
std::optional<DnsVerdict> judgeStrayDatagram(std::span<const uint8_t> datagram, uint16_t query_id,
                                             const config::Check& check);

}  // namespace tandem::resources::health
