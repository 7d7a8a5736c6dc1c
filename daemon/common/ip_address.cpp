#include "common/ip_address.h"

#include <arpa/inet.h>

#include <charconv>

namespace tandem {

std::string_view familyName(Family f) { return f == Family::kInet ? "IPv4" : "IPv6"; }

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  if (text.empty() || text.size() > 63) return std::nullopt;
  std::string s(text);
  IpAddress a;
  if (s.find(':') == std::string::npos) {
    a.family = Family::kInet;
    if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) != 1) return std::nullopt;
  } else {
    a.family = Family::kInet6;
    if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) != 1) return std::nullopt;
  }
  return a;
}

std::string IpAddress::toString() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(family == Family::kInet ? AF_INET : AF_INET6, bytes.data(), buf, sizeof buf);
  return buf;
}

bool IpAddress::isMulticast() const {
  return family == Family::kInet ? (bytes[0] & 0xf0) == 0xe0 : bytes[0] == 0xff;
}

bool IpAddress::isUnspecified() const {
  size_t n = family == Family::kInet ? 4 : 16;
  for (size_t i = 0; i < n; ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

std::optional<IpPrefix> IpPrefix::parse(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto addr = IpAddress::parse(text.substr(0, slash));
  if (!addr) return std::nullopt;
  std::string_view len_text = text.substr(slash + 1);
  int len = -1;
  auto [p, ec] = std::from_chars(len_text.data(), len_text.data() + len_text.size(), len);
  if (ec != std::errc() || p != len_text.data() + len_text.size() || len < 0 ||
      len > addr->maxPrefix()) {
    return std::nullopt;
  }
  return IpPrefix{*addr, len};
}

std::string IpPrefix::toString() const { return address.toString() + "/" + std::to_string(length); }

std::optional<Endpoint> Endpoint::parse(std::string_view text, bool port_optional) {
  std::string_view host = text;
  std::string_view port_text;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port_text = rest.substr(1);
      has_port = true;
    }
    if (host.find(':') == std::string_view::npos) return std::nullopt;  // brackets are for IPv6
  } else {
    size_t first = text.find(':');
    if (first != std::string_view::npos && text.find(':', first + 1) == std::string_view::npos) {
      host = text.substr(0, first);  // exactly one colon: IPv4 with a port
      port_text = text.substr(first + 1);
      has_port = true;
    }
  }
  auto addr = IpAddress::parse(host);
  if (!addr) return std::nullopt;
  Endpoint e{*addr, 0};
  if (!has_port) {
    if (!port_optional) return std::nullopt;
    return e;
  }
  unsigned port = 0;
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || p != port_text.data() + port_text.size() ||
      port == 0 || port > 65535) {
    return std::nullopt;
  }
  e.port = static_cast<uint16_t>(port);
  return e;
}

std::string endpointProblem(std::string_view text, bool port_optional) {
  std::string_view host = text;
  std::optional<std::string_view> port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return "its [ has no ]";
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return "what follows ] is not :port";
    if (!rest.empty()) port_text = rest.substr(1);
    if (host.find(':') == std::string_view::npos) return "brackets are for IPv6 addresses";
  } else {
    const size_t first = text.find(':');
    if (first != std::string_view::npos && text.find(':', first + 1) == std::string_view::npos) {
      host = text.substr(0, first);
      port_text = text.substr(first + 1);
    } else if (first != std::string_view::npos && IpAddress::parse(text) && !port_optional) {
      return "an IPv6 address takes its port in brackets, e.g. [2001:db8::10]:80";
    }
  }
  if (!IpAddress::parse(host)) {
    return "\"" + std::string(host) + "\" is not an IP address (names are not resolved)";
  }
  if (!port_text) return port_optional ? "it is not an address[:port]" : "it has no port";
  if (port_text->empty()) return "it has no port after the colon";
  if (port_text->find_first_not_of("0123456789") != std::string_view::npos) {
    return "port \"" + std::string(*port_text) + "\" is not a number";
  }
  if (port_text->find_first_not_of('0') == std::string_view::npos) return "port 0 is not a port";
  if (port_text->size() > 5 || std::stoul(std::string(*port_text)) > 65535) {
    return "port " + std::string(*port_text) + " is over 65535";
  }
  return "it is not an address:port";
}

std::string Endpoint::toString() const {
  if (port != 0) return hostPort(address, port);
  return address.family == Family::kInet6 ? "[" + address.toString() + "]" : address.toString();
}

std::string hostPort(const IpAddress& address, uint16_t port) {
  if (address.family == Family::kInet6) {
    return "[" + address.toString() + "]:" + std::to_string(port);
  }
  return address.toString() + ":" + std::to_string(port);
}

std::optional<int> netmaskLength(const IpAddress& mask) {
  int n = mask.family == Family::kInet ? 4 : 16;
  int len = 0;
  bool seen_zero = false;
  for (int i = 0; i < n; ++i) {
    for (int bit = 7; bit >= 0; --bit) {
      bool one = (mask.bytes[static_cast<size_t>(i)] >> bit) & 1;
      if (one && seen_zero) return std::nullopt;
      if (one)
        ++len;
      else
        seen_zero = true;
    }
  }
  return len;
}

}  // namespace tandem
