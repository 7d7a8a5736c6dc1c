#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tandem {

enum class Family : uint8_t { kInet = 4, kInet6 = 6 };

std::string_view familyName(Family f);  // "IPv4" / "IPv6"

// An IPv4 or IPv6 address as bytes in network order (IPv4 uses the first four).
struct IpAddress {
  Family family = Family::kInet;
  std::array<uint8_t, 16> bytes{};

  static std::optional<IpAddress> parse(std::string_view text);
  std::string toString() const;
  int maxPrefix() const { return family == Family::kInet ? 32 : 128; }
  bool isMulticast() const;
  bool isUnspecified() const;
  auto operator<=>(const IpAddress&) const = default;
};

// address/prefix, e.g. 198.51.100.10/24 or 2001:db8::10/64.
struct IpPrefix {
  IpAddress address;
  int length = 0;

  static std::optional<IpPrefix> parse(std::string_view text);
  std::string toString() const;
  auto operator<=>(const IpPrefix&) const = default;
};

// address:port; IPv6 in brackets, [2001:db8::1]:80. The port may be absent when allowed.
struct Endpoint {
  IpAddress address;
  uint16_t port = 0;

  // Accepts "addr:port", "[v6]:port", and when port_optional also "addr" and "[v6]"/"v6".
  static std::optional<Endpoint> parse(std::string_view text, bool port_optional);
  std::string toString() const;
  auto operator<=>(const Endpoint&) const = default;
};

// Why text is not an Endpoint (parse said no), in a few words naming the part that is wrong:
// "port 0 is not a port", "\"localhost\" is not an IP address (names are not resolved)".
std::string endpointProblem(std::string_view text, bool port_optional);

// "198.51.100.21:80", "[2001:db8::21]:80": an address and port, the port written even when it
// is 0 (a fwmark service's real servers), where Endpoint::toString leaves it out.
std::string hostPort(const IpAddress& address, uint16_t port);

// Is mask a contiguous run of ones from the top (a real netmask)? Returns its length if so.
std::optional<int> netmaskLength(const IpAddress& mask);

}  // namespace tandem
