#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ip_address.h"
#include "common/result.h"
#include "import_report.h"

// ldirectord.cf as a structure: the global directives, and each `virtual=` block with its
// indented lines, every item with the line it came from. Pure: text in, structure or errors out.
// The values ldirectord resolves through DNS or /etc/services (host names, port names) are
// errors here, since tandem takes literal addresses and ports only.
namespace tandem::importer::ldirectord {

// One `key = value` line (also `key=value`); value is trimmed, quotes kept.
struct Directive {
  std::string key;
  std::string value;
  int line = 0;
};

// A `virtual=` (or `virtual6=`) head: an address and port, or a firewall mark.
struct VirtualAddress {
  std::optional<Endpoint> address;
  std::optional<uint32_t> fwmark;
  bool ipv6 = false;  // the family (for a fwmark service, from virtual6=)
};

// One `real=` line: `ADDR[->ADDR][:PORT] gate|masq|ipip [WEIGHT] ["request", "receive"]
// [l:N] [u:N]`. A range is expanded into its addresses.
struct RealSpec {
  std::vector<IpAddress> addresses;  // one, or every address of a range
  bool range = false;
  std::optional<uint16_t> port;  // absent: the virtual's (ldirectord writes 0)
  std::string method;            // "gate", "masq" or "ipip"
  std::optional<int64_t> weight;
  std::optional<std::string> request;
  std::optional<std::string> receive;
  std::optional<int64_t> lower_threshold;
  std::optional<int64_t> upper_threshold;
};

// A `fallback=` value: `ADDR[:PORT] [gate|masq|ipip]`.
struct FallbackSpec {
  IpAddress address;
  std::optional<uint16_t> port;
  std::string method;  // "" when not given
};

struct RealServerLine {
  RealSpec spec;
  std::string keyword;  // "real" or "real6"
  int line = 0;
};

struct VirtualBlock {
  std::string keyword;  // "virtual" or "virtual6"
  std::string value;    // as written
  VirtualAddress address;
  int line = 0;
  std::vector<Directive> directives;  // every indented line but real=
  std::vector<RealServerLine> reals;
};

struct Config {
  std::vector<Directive> globals;
  std::vector<VirtualBlock> virtuals;
};

struct ParseResult {
  Config config;
  std::vector<ImportError> errors;  // every bad line; non-empty: config is incomplete
};

// Parses the whole file. `#` starts a comment outside double quotes; a body line is any
// indented line, and belongs to the last `virtual=` above it.
ParseResult parseConfig(std::string_view text, const std::string& file);

// The value parsers, each with an error message that says what to write instead.
Result<VirtualAddress> parseVirtualAddress(std::string_view value, bool virtual6);
Result<RealSpec> parseRealServer(std::string_view value);
Result<FallbackSpec> parseFallback(std::string_view value);
// A port: a decimal number from 1 to 65535.
Result<uint16_t> parsePort(std::string_view text);
// A whole non-negative decimal number (at most 10 digits), as ldirectord's counts and seconds.
Result<int64_t> parseCount(std::string_view text, std::string_view what);

// "text" -> text; anything else unchanged.
std::string unquote(std::string_view value);

// The most addresses one `real=` range may expand to.
inline constexpr int kMaxRangeAddresses = 1024;

}  // namespace tandem::importer::ldirectord
