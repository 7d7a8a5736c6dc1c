#include "health/dns_answer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <utility>

#include "common/ip_address.h"

namespace tandem::resources::health {

namespace {

constexpr size_t kHeaderSize = 12;
constexpr size_t kMaxNameLength = 255;  // RFC 1035 2.3.4, in wire bytes
// How many answer records a reason lists before "and N more", and how much of each.
constexpr size_t kListedAnswers = 3;
constexpr size_t kListedChars = 80;

struct TypeName {
  uint16_t code;
  std::string_view name;
};
constexpr std::array<TypeName, 9> kTypes = {{{1, "A"},
                                             {2, "NS"},
                                             {5, "CNAME"},
                                             {6, "SOA"},
                                             {12, "PTR"},
                                             {15, "MX"},
                                             {16, "TXT"},
                                             {28, "AAAA"},
                                             {33, "SRV"}}};
constexpr std::array<std::string_view, 11> kRcodes = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
                                                      "NOTIMP",  "REFUSED", "YXDOMAIN", "YXRRSET",
                                                      "NXRRSET", "NOTAUTH", "NOTZONE"};

std::string typeName(uint16_t type) {
  for (const auto& t : kTypes) {
    if (t.code == type) return std::string(t.name);
  }
  return "TYPE" + std::to_string(type);
}

// Bytes as text: printable ASCII as it is, anything else as \DDD (RFC 1035 5.1); in a name's
// labels the dot and the backslash are escaped too, so a label holding a dot reads as one.
void appendText(std::string& out, std::span<const uint8_t> bytes, bool label) {
  for (uint8_t b : bytes) {
    if (label && (b == '.' || b == '\\')) {
      out += '\\';
      out += static_cast<char>(b);
    } else if (b >= 0x20 && b < 0x7f) {
      out += static_cast<char>(b);
    } else {
      char esc[5];
      std::snprintf(esc, sizeof esc, "\\%03u", static_cast<unsigned>(b));
      out += esc;
    }
  }
}

// Reads a message front to back; every read is checked against its end.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> message) : m_(message) {}

  size_t pos() const { return pos_; }
  size_t left() const { return m_.size() - pos_; }
  void seek(size_t pos) { pos_ = pos; }

  bool u8(uint8_t& v) {
    if (left() < 1) return false;
    v = m_[pos_++];
    return true;
  }
  bool u16(uint16_t& v) {
    if (left() < 2) return false;
    v = static_cast<uint16_t>(m_[pos_] << 8 | m_[pos_ + 1]);
    pos_ += 2;
    return true;
  }
  bool u32(uint32_t& v) {
    uint16_t hi = 0, lo = 0;
    if (!u16(hi) || !u16(lo)) return false;
    v = uint32_t{hi} << 16 | lo;
    return true;
  }
  bool bytes(size_t n, std::span<const uint8_t>& out) {
    if (left() < n) return false;
    out = m_.subspan(pos_, n);
    pos_ += n;
    return true;
  }

  // A possibly compressed name (RFC 1035 4.1.4), left after its last in-place byte. A pointer
  // must point before itself, so following pointers always ends; the name's length is bounded
  // as the RFC bounds it. nullopt with why in `error`.
  std::optional<std::string> name(std::string& error) {
    std::string out;
    size_t at = pos_;
    std::optional<size_t> resume;  // where reading goes on after the first pointer
    size_t wire_length = 1;
    for (;;) {
      if (at >= m_.size()) {
        error = "name runs past the end";
        return std::nullopt;
      }
      const uint8_t len = m_[at];
      if ((len & 0xc0) == 0xc0) {
        if (at + 1 >= m_.size()) {
          error = "name runs past the end";
          return std::nullopt;
        }
        const size_t target = static_cast<size_t>(len & 0x3f) << 8 | m_[at + 1];
        if (target >= at) {
          error = "name compression points forward";
          return std::nullopt;
        }
        if (!resume) resume = at + 2;
        at = target;
        continue;
      }
      if ((len & 0xc0) != 0) {
        error = "name has a label of an unknown kind";
        return std::nullopt;
      }
      if (len == 0) {
        pos_ = resume.value_or(at + 1);
        return out.empty() ? std::string(".") : out;
      }
      wire_length += 1 + len;
      if (wire_length > kMaxNameLength) {
        error = "name longer than 255 bytes";
        return std::nullopt;
      }
      if (at + 1 + len > m_.size()) {
        error = "name runs past the end";
        return std::nullopt;
      }
      if (!out.empty()) out += '.';
      appendText(out, m_.subspan(at + 1, len), true);
      at += 1 + len;
    }
  }

 private:
  std::span<const uint8_t> m_;
  size_t pos_ = 0;
};

std::string plural(size_t n, std::string_view what) {
  return std::to_string(n) + " " + std::string(what) + (n == 1 ? "" : "s");
}

std::string hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xf];
  }
  return out;
}

// One record's data in presentation form. r is at the data's start; end is where it ends. An
// embedded name may point back into the message, but its own bytes must lie within the data,
// and the fields must fill the data exactly.
std::optional<std::string> renderData(Reader& r, uint16_t type, size_t end, std::string& error) {
  const size_t length = end - r.pos();
  const std::string what = typeName(type) + " record";
  auto failed = [&error](std::string why) -> std::optional<std::string> {
    error = std::move(why);
    return std::nullopt;
  };
  auto name = [&]() -> std::optional<std::string> {
    auto n = r.name(error);
    if (n && r.pos() > end) return failed("name runs past its record");
    return n;
  };
  auto number = [&](auto& v) {
    bool ok = false;
    if constexpr (sizeof v == 2) {
      ok = r.u16(v);
    } else {
      ok = r.u32(v);
    }
    return ok && r.pos() <= end;
  };
  auto whole = [&](std::string text) -> std::optional<std::string> {
    if (r.pos() != end) return failed(what + " longer than its fields");
    return text;
  };
  switch (type) {
    case 1:     // A
    case 28: {  // AAAA
      const size_t want = type == 1 ? 4 : 16;
      if (length != want) return failed(what + " of " + plural(length, "byte"));
      IpAddress a;
      a.family = type == 1 ? Family::kInet : Family::kInet6;
      std::span<const uint8_t> b;
      (void)r.bytes(want, b);
      std::copy(b.begin(), b.end(), a.bytes.begin());
      return a.toString();
    }
    case 2:     // NS
    case 5:     // CNAME
    case 12: {  // PTR
      auto n = name();
      if (!n) return std::nullopt;
      return whole(std::move(*n));
    }
    case 15: {  // MX
      uint16_t preference = 0;
      if (!number(preference)) return failed(what + " cut short");
      auto n = name();
      if (!n) return std::nullopt;
      return whole(std::to_string(preference) + " " + *n);
    }
    case 33: {  // SRV
      uint16_t priority = 0, weight = 0, port = 0;
      if (!number(priority) || !number(weight) || !number(port)) {
        return failed(what + " cut short");
      }
      auto n = name();
      if (!n) return std::nullopt;
      return whole(std::to_string(priority) + " " + std::to_string(weight) + " " +
                   std::to_string(port) + " " + *n);
    }
    case 6: {  // SOA
      auto mname = name();
      if (!mname) return std::nullopt;
      auto rname = name();
      if (!rname) return std::nullopt;
      std::string out = *mname + " " + *rname;
      for (int i = 0; i < 5; ++i) {  // serial refresh retry expire minimum
        uint32_t v = 0;
        if (!number(v)) return failed(what + " cut short");
        out += " " + std::to_string(v);
      }
      return whole(std::move(out));
    }
    case 16: {  // TXT: one or more <length><bytes>
      if (length == 0) return failed(what + " without a string");
      std::string out;
      while (r.pos() < end) {
        uint8_t n = 0;
        std::span<const uint8_t> s;
        if (!r.u8(n) || r.pos() + n > end || !r.bytes(n, s)) {
          return failed("TXT string runs past its record");
        }
        appendText(out, s, false);
      }
      return out;
    }
    default: {
      std::span<const uint8_t> b;
      (void)r.bytes(length, b);
      return "\\# " + std::to_string(length) + (length != 0 ? " " + hex(b) : "");
    }
  }
}

std::string listAnswers(const std::vector<std::string>& answers) {
  if (answers.empty()) return "none";
  std::string out;
  for (size_t i = 0; i < answers.size() && i < kListedAnswers; ++i) {
    if (i > 0) out += ", ";
    const std::string& a = answers[i];
    out += a.size() > kListedChars ? a.substr(0, kListedChars) + "..." : a;
  }
  if (answers.size() > kListedAnswers) {
    out += " and " + std::to_string(answers.size() - kListedAnswers) + " more";
  }
  return out;
}

bool sameName(std::string_view a, std::string_view b) {
  auto trim = [](std::string_view s) {
    if (s.size() > 1 && s.back() == '.') s.remove_suffix(1);
    return s;
  };
  a = trim(a);
  b = trim(b);
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

DnsVerdict judge(const DnsReply& reply, const config::Check& check) {
  const std::string rcode = dnsRcodeName(reply.rcode);
  if (rcode != check.expect_rcode) {
    return {false, "rcode " + rcode + ", expected " + check.expect_rcode};
  }
  const std::string summary = rcode + ", " + plural(reply.answers.size(), "answer");
  if (check.expect_answer.empty()) return {true, summary};
  const bool found = std::any_of(
      reply.answers.begin(), reply.answers.end(),
      [&](const std::string& a) { return a.find(check.expect_answer) != std::string::npos; });
  if (!found) {
    return {false, "no answer contains \"" + check.expect_answer + "\" (got " +
                       listAnswers(reply.answers) + ")"};
  }
  return {true, summary};
}

}  // namespace

std::optional<uint16_t> dnsTypeCode(std::string_view name) {
  for (const auto& t : kTypes) {
    if (t.name == name) return t.code;
  }
  return std::nullopt;
}

std::optional<int> dnsRcodeCode(std::string_view name) {
  for (size_t i = 0; i < 6; ++i) {  // the ones a check may expect
    if (kRcodes[i] == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::string dnsRcodeName(int rcode) {
  if (rcode >= 0 && static_cast<size_t>(rcode) < kRcodes.size()) {
    return std::string(kRcodes[static_cast<size_t>(rcode)]);
  }
  return "RCODE" + std::to_string(rcode);
}

Result<DnsReply> parseDnsReply(std::span<const uint8_t> message) {
  auto bad = [](std::string what) { return fail(ErrorCode::kParse, std::move(what)); };
  if (message.empty()) return bad("an empty datagram");
  if (message.size() < kHeaderSize) {
    return bad(plural(message.size(), "byte") + ", shorter than a DNS header");
  }
  Reader r(message);
  DnsReply reply;
  uint8_t flags1 = 0, flags2 = 0;
  uint16_t qdcount = 0, ancount = 0, nscount = 0, arcount = 0;
  (void)r.u16(reply.id);
  (void)r.u8(flags1);
  (void)r.u8(flags2);
  (void)r.u16(qdcount);
  (void)r.u16(ancount);
  (void)r.u16(nscount);
  (void)r.u16(arcount);
  reply.response = (flags1 & 0x80) != 0;
  reply.truncated = (flags1 & 0x02) != 0;
  reply.rcode = flags2 & 0x0f;

  std::string error;
  for (uint16_t i = 1; i <= qdcount; ++i) {
    std::string which = "question " + std::to_string(i);
    DnsQuestion q;
    auto name = r.name(error);
    if (!name) return bad(which.append(": ").append(error));
    q.name = std::move(*name);
    if (!r.u16(q.type) || !r.u16(q.klass)) return bad(which + " runs past the end");
    reply.questions.push_back(std::move(q));
  }
  for (uint16_t i = 1; i <= ancount; ++i) {
    std::string which = "answer " + std::to_string(i);
    auto name = r.name(error);
    if (!name) return bad(which.append(": ").append(error));
    uint16_t type = 0, klass = 0, rdlength = 0;
    uint32_t ttl = 0;
    if (!r.u16(type) || !r.u16(klass) || !r.u32(ttl) || !r.u16(rdlength)) {
      return bad(which + " runs past the end");
    }
    if (rdlength > r.left()) {
      return bad(which + " runs past the end (" + std::to_string(rdlength) + " bytes of data, " +
                 std::to_string(r.left()) + " left)");
    }
    const size_t end = r.pos() + rdlength;
    auto text = renderData(r, type, end, error);
    if (!text) return bad(which.append(": ").append(error));
    r.seek(end);
    reply.answers.push_back(std::move(*text));
  }
  return reply;
}

DnsVerdict judgeDnsReply(std::span<const uint8_t> reply, const config::Check& check) {
  auto parsed = parseDnsReply(reply);
  if (!parsed) return {false, "garbage reply: " + parsed.error().message};
  // c-ares matches a reply by id and question only: an echo of the query passes that.
  if (!parsed->response) return {false, "garbage reply: a query, not a response"};
  return judge(*parsed, check);
}

std::optional<DnsVerdict> judgeStrayDatagram(std::span<const uint8_t> datagram, uint16_t query_id,
                                             const config::Check& check) {
  auto garbage = [](const std::string& what) {
    return DnsVerdict{false, "garbage reply: " + what};
  };
  if (datagram.size() < kHeaderSize) {
    // Too short to be anyone's reply, whatever its first two bytes say.
    return garbage(parseDnsReply(datagram).error().message);
  }
  const uint16_t id = static_cast<uint16_t>(datagram[0] << 8 | datagram[1]);
  if (id != query_id) return std::nullopt;
  auto parsed = parseDnsReply(datagram);
  if (!parsed) return garbage(parsed.error().message);
  const DnsReply& reply = *parsed;
  if (!reply.response) return garbage("a query, not a response");
  if (reply.questions.empty()) return judge(reply, check);
  const auto type = dnsTypeCode(check.query_type);
  const bool ours = reply.questions.size() == 1 && reply.questions[0].klass == 1 && type &&
                    reply.questions[0].type == *type &&
                    sameName(reply.questions[0].name, check.query_name);
  if (!ours) {
    const DnsQuestion& q = reply.questions[0];
    return garbage("a reply to another question (" + q.name + " " + typeName(q.type) + ")");
  }
  return std::nullopt;  // ours and well formed: the resolver asks again over TCP (truncated)
}

}  // namespace tandem::resources::health
