#include "ldirectord_parser.h"

#include <cctype>

namespace tandem::importer::ldirectord {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool allDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Cuts a `#` comment, unless it is inside double quotes (a receive string may hold one).
std::string_view stripComment(std::string_view line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (line[i] == '#' && !quoted) return line.substr(0, i);
  }
  return line;
}

bool isKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

// A printable rendering of what was found, for messages.
std::string shown(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 60)) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  if (s.size() > 60) out += "...";
  return out + "\"";
}

// A literal address, or an error that says a host name cannot be used.
Result<IpAddress> parseAddress(std::string_view text, bool bracketed) {
  if (auto a = IpAddress::parse(text)) {
    if (a->family == Family::kInet6 && !bracketed) {
      return fail(
          ErrorCode::kInvalidArgument,
          "IPv6 address " + shown(text) + " must be in brackets: [" + std::string(text) + "]");
    }
    return *a;
  }
  if (text.empty()) return fail(ErrorCode::kInvalidArgument, "the address is missing");
  return fail(ErrorCode::kInvalidArgument,
              shown(text) +
                  " is not an IP address; tandem takes literal addresses only (a director must "
                  "not depend on DNS to fail over): write the address it resolves to");
}

// "ADDR", "ADDR:PORT", "[V6]", "[V6]:PORT": the address text and the port text (may be empty).
struct HostPortText {
  std::string_view host;
  std::string_view port;
  bool bracketed = false;
  bool has_port = false;
};

Result<HostPortText> splitHostPort(std::string_view text) {
  HostPortText out;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return fail(ErrorCode::kInvalidArgument,
                  shown(text) + " has no closing bracket: write [ADDRESS]:PORT");
    }
    out.host = text.substr(1, close - 1);
    out.bracketed = true;
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return fail(ErrorCode::kInvalidArgument,
                    "unexpected " + shown(rest) + " after the address: write [ADDRESS]:PORT");
      }
      out.port = rest.substr(1);
      out.has_port = true;
    }
    return out;
  }
  size_t colon = text.rfind(':');
  if (colon != std::string_view::npos && text.find(':') != colon) {
    // More than one colon without brackets: an IPv6 address written bare.
    return fail(ErrorCode::kInvalidArgument,
                "IPv6 address " + shown(text) + " must be in brackets: [ADDRESS]:PORT");
  }
  if (colon == std::string_view::npos) {
    out.host = text;
  } else {
    out.host = text.substr(0, colon);
    out.port = text.substr(colon + 1);
    out.has_port = true;
  }
  return out;
}

// Splits on runs of white space, keeping double-quoted strings whole (quotes included).
std::vector<std::string_view> tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && isSpace(s[i])) ++i;
    if (i >= s.size()) break;
    size_t start = i;
    if (s[i] == '"') {
      size_t close = s.find('"', i + 1);
      i = close == std::string_view::npos ? s.size() : close + 1;
    } else {
      while (i < s.size() && !isSpace(s[i])) ++i;
    }
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

constexpr std::string_view kRealForm =
    "the form is real=ADDRESS[:PORT] gate|masq|ipip [WEIGHT] [\"request\", \"receive\"]";

}  // namespace

std::string unquote(std::string_view value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    return std::string(value.substr(1, value.size() - 2));
  }
  return std::string(value);
}

Result<uint16_t> parsePort(std::string_view text) {
  if (text.empty()) return fail(ErrorCode::kInvalidArgument, "the port is missing after ':'");
  if (!allDigits(text)) {
    return fail(ErrorCode::kInvalidArgument,
                "port " + shown(text) +
                    " is not a number; tandem does not look names up in /etc/services: write "
                    "the port number (80 for http, 443 for https)");
  }
  if (text.size() > 5 || std::stoi(std::string(text)) == 0 ||
      std::stoi(std::string(text)) > 65535) {
    return fail(ErrorCode::kInvalidArgument,
                "port " + std::string(text) + " is out of range: use 1 to 65535");
  }
  return static_cast<uint16_t>(std::stoi(std::string(text)));
}

Result<int64_t> parseCount(std::string_view text, std::string_view what) {
  text = trim(text);
  if (!allDigits(text) || text.size() > 10) {
    return fail(ErrorCode::kInvalidArgument, std::string(what) + " " + shown(text) +
                                                 " is not a whole number: write digits only, "
                                                 "e.g. " +
                                                 std::string(what) + " = 5");
  }
  return std::stoll(std::string(text));
}

Result<VirtualAddress> parseVirtualAddress(std::string_view value, bool virtual6) {
  value = trim(value);
  VirtualAddress out;
  out.ipv6 = virtual6;
  if (allDigits(value)) {
    if (value.size() > 10 || std::stoull(std::string(value)) == 0 ||
        std::stoull(std::string(value)) > 4294967295ULL) {
      return fail(ErrorCode::kInvalidArgument,
                  "firewall mark " + std::string(value) + " is out of range: use 1 to 4294967295");
    }
    out.fwmark = static_cast<uint32_t>(std::stoull(std::string(value)));
    return out;
  }
  auto hp = splitHostPort(value);
  if (!hp) return fail(hp.error());
  if (!hp->has_port) {
    return fail(ErrorCode::kInvalidArgument,
                "virtual service " + shown(value) +
                    " has no port: write ADDRESS:PORT, [IPV6]:PORT or a firewall mark number");
  }
  auto addr = parseAddress(hp->host, hp->bracketed);
  if (!addr) return fail(addr.error());
  auto port = parsePort(hp->port);
  if (!port) return fail(port.error());
  if (virtual6 && addr->family != Family::kInet6) {
    return fail(ErrorCode::kInvalidArgument,
                "virtual6 takes an IPv6 address: write virtual=" + std::string(value));
  }
  out.ipv6 = addr->family == Family::kInet6;
  out.address = Endpoint{*addr, *port};
  return out;
}

Result<RealSpec> parseRealServer(std::string_view value) {
  RealSpec out;
  std::vector<std::string_view> t = tokens(trim(value));
  if (t.empty())
    return fail(ErrorCode::kInvalidArgument,
                "the real server is missing; " + std::string(kRealForm));
  // The address part: ADDR[->ADDR][:PORT].
  std::string_view where = t[0];
  std::string_view first = where;
  std::string_view last;
  size_t arrow = where.find("->");
  std::string_view port_text;
  bool has_port = false;
  if (arrow != std::string_view::npos) {
    first = where.substr(0, arrow);
    std::string_view rest = where.substr(arrow + 2);
    auto hp = splitHostPort(rest);
    if (!hp) return fail(hp.error());
    last = hp->host;
    port_text = hp->port;
    has_port = hp->has_port;
    if (hp->bracketed || first.find(':') != std::string_view::npos) {
      return fail(ErrorCode::kInvalidArgument,
                  "ranges are IPv4 only (as in ldirectord): list each IPv6 real server on its "
                  "own real6= line");
    }
  } else {
    auto hp = splitHostPort(where);
    if (!hp) return fail(hp.error());
    first = hp->host;
    port_text = hp->port;
    has_port = hp->has_port;
    auto a = parseAddress(first, hp->bracketed);
    if (!a) return fail(a.error());
    out.addresses.push_back(*a);
  }
  if (arrow != std::string_view::npos) {
    auto a = parseAddress(first, false);
    if (!a) return fail(a.error());
    auto b = parseAddress(last, false);
    if (!b) return fail(b.error());
    auto to_int = [](const IpAddress& x) {
      return (uint32_t{x.bytes[0]} << 24) | (uint32_t{x.bytes[1]} << 16) |
             (uint32_t{x.bytes[2]} << 8) | uint32_t{x.bytes[3]};
    };
    uint32_t lo = to_int(*a);
    uint32_t hi = to_int(*b);
    if (hi < lo) {
      return fail(ErrorCode::kInvalidArgument,
                  "range " + shown(where) + " ends before it starts: write LOW->HIGH");
    }
    if (hi - lo >= static_cast<uint32_t>(kMaxRangeAddresses)) {
      return fail(ErrorCode::kInvalidArgument,
                  "range " + shown(where) + " holds " + std::to_string(uint64_t{hi} - lo + 1) +
                      " addresses; at most " + std::to_string(kMaxRangeAddresses) +
                      " are imported: split it, or check the bounds");
    }
    out.range = true;
    for (uint32_t v = lo;; ++v) {
      IpAddress x;
      x.family = Family::kInet;
      x.bytes[0] = static_cast<uint8_t>(v >> 24);
      x.bytes[1] = static_cast<uint8_t>(v >> 16);
      x.bytes[2] = static_cast<uint8_t>(v >> 8);
      x.bytes[3] = static_cast<uint8_t>(v);
      out.addresses.push_back(x);
      if (v == hi) break;
    }
  }
  if (has_port) {
    auto p = parsePort(port_text);
    if (!p) return fail(p.error());
    out.port = *p;
  }
  // The forwarding method.
  if (t.size() < 2) {
    return fail(ErrorCode::kInvalidArgument,
                "the forwarding method is missing: write gate (dr), masq (nat) or ipip (tun) "
                "after the address");
  }
  if (t[1] != "gate" && t[1] != "masq" && t[1] != "ipip") {
    return fail(ErrorCode::kInvalidArgument, "forwarding method " + shown(t[1]) +
                                                 " is not one of gate, masq or ipip; " +
                                                 std::string(kRealForm));
  }
  out.method = std::string(t[1]);
  size_t i = 2;
  if (i < t.size() && allDigits(t[i])) {
    if (t[i].size() > 10) {
      return fail(ErrorCode::kInvalidArgument,
                  "weight " + std::string(t[i]) + " is out of range: use 0 to 65535");
    }
    out.weight = std::stoll(std::string(t[i]));
    ++i;
  }
  // ["request", "receive"]: two quoted strings, with a comma or a space between them.
  if (i < t.size() && t[i].front() == '"') {
    std::string_view req = t[i];
    if (req.size() >= 2 && req.back() == ',') req.remove_suffix(1);
    bool comma_after = i + 1 < t.size() && t[i + 1] == ",";
    size_t next = comma_after ? i + 2 : i + 1;
    if (req.size() < 2 || req.back() != '"' || next >= t.size() || t[next].front() != '"' ||
        t[next].size() < 2 || t[next].back() != '"') {
      return fail(ErrorCode::kInvalidArgument,
                  "a request needs its receive string: write \"request\", \"receive\", both "
                  "quoted");
    }
    out.request = unquote(req);
    out.receive = unquote(t[next]);
    i = next + 1;
  }
  for (; i < t.size(); ++i) {
    std::string_view tok = t[i];
    if ((tok.starts_with("l:") || tok.starts_with("u:")) && allDigits(tok.substr(2))) {
      if (tok.size() > 12) {
        return fail(ErrorCode::kInvalidArgument,
                    "threshold " + shown(tok) + " is out of range: use 0 to 2147483647");
      }
      int64_t n = std::stoll(std::string(tok.substr(2)));
      (tok[0] == 'l' ? out.lower_threshold : out.upper_threshold) = n;
      continue;
    }
    return fail(ErrorCode::kInvalidArgument, "unexpected " + shown(tok) + " in the real server; " +
                                                 std::string(kRealForm) + " [l:LOW] [u:HIGH]");
  }
  return out;
}

Result<FallbackSpec> parseFallback(std::string_view value) {
  const std::string text = unquote(trim(value));  // the tokens point into it
  std::vector<std::string_view> t = tokens(text);
  if (t.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "the fallback server is missing: write ADDRESS[:PORT]");
  }
  FallbackSpec out;
  auto hp = splitHostPort(t[0]);
  if (!hp) return fail(hp.error());
  auto a = parseAddress(hp->host, hp->bracketed);
  if (!a) return fail(a.error());
  out.address = *a;
  if (hp->has_port) {
    auto p = parsePort(hp->port);
    if (!p) return fail(p.error());
    out.port = *p;
  }
  if (t.size() >= 2) {
    if (t[1] != "gate" && t[1] != "masq" && t[1] != "ipip") {
      return fail(ErrorCode::kInvalidArgument,
                  "forwarding method " + shown(t[1]) +
                      " is not one of gate, masq or ipip; the form is fallback=ADDRESS[:PORT] "
                      "[gate|masq|ipip]");
    }
    out.method = std::string(t[1]);
  }
  if (t.size() > 2) {
    return fail(ErrorCode::kInvalidArgument,
                "unexpected " + shown(t[2]) +
                    " after the fallback; the form is fallback=ADDRESS[:PORT] [gate|masq|ipip]");
  }
  return out;
}

ParseResult parseConfig(std::string_view text, const std::string& file) {
  ParseResult out;
  auto error = [&](int line, std::string message) {
    out.errors.push_back({file, line, std::move(message)});
  };
  int line_no = 0;
  VirtualBlock* current = nullptr;
  bool in_bad_block = false;  // under a virtual= line that was an error: its lines are skipped
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view raw =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    if (raw.find('\0') != std::string_view::npos) {
      error(line_no, "a NUL byte: is this a text file?");
      continue;
    }
    std::string_view body = trim(stripComment(raw));
    if (body.empty()) continue;  // blank, or a comment
    bool indented = isSpace(raw.front());
    // KEY = VALUE, or (ldirectord's old form) a bare `supervised`.
    size_t k = 0;
    while (k < body.size() && isKeyChar(body[k])) ++k;
    std::string key(body.substr(0, k));
    std::string_view rest = trim(body.substr(k));
    if (key.empty() || (rest.empty() && key != "supervised") ||
        (!rest.empty() && rest.front() != '=')) {
      error(line_no, shown(body) +
                         " is not a directive: ldirectord.cf lines are KEY = VALUE, with the lines "
                         "of a virtual service indented under its virtual= line");
      continue;
    }
    std::string value = rest.empty() ? std::string("yes") : std::string(trim(rest.substr(1)));
    if (value.empty()) {
      std::string message = key;
      message += " has no value: write " + key + " = VALUE, or remove the line";
      error(line_no, std::move(message));
      continue;
    }
    if (!indented && (key == "virtual" || key == "virtual6")) {
      VirtualBlock block;
      block.keyword = key;
      block.value = value;
      block.line = line_no;
      auto addr = parseVirtualAddress(value, key == "virtual6");
      if (!addr) {
        error(line_no, addr.error().message);
        current = nullptr;
        in_bad_block = true;  // its lines would only repeat the error
        continue;
      }
      in_bad_block = false;
      block.address = *addr;
      out.config.virtuals.push_back(std::move(block));
      current = &out.config.virtuals.back();
      continue;
    }
    if (!indented) {
      current = nullptr;
      in_bad_block = false;
      out.config.globals.push_back({key, value, line_no});
      continue;
    }
    if (current == nullptr) {
      if (in_bad_block) continue;
      error(line_no, "indented " + shown(key) +
                         " is not under a virtual= line: indent only the lines of a virtual "
                         "service, or add its virtual=ADDRESS:PORT line above");
      continue;
    }
    if (key == "real" || key == "real6") {
      auto spec = parseRealServer(value);
      if (!spec) {
        error(line_no, spec.error().message);
        continue;
      }
      current->reals.push_back({std::move(*spec), key, line_no});
      continue;
    }
    current->directives.push_back({key, value, line_no});
  }
  return out;
}

}  // namespace tandem::importer::ldirectord
