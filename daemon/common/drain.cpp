#include "common/drain.h"

#include <netinet/in.h>

#include <charconv>
#include <vector>

namespace tandem {

std::string ipProtocolName(uint16_t protocol) {
  switch (protocol) {
    case IPPROTO_TCP:
      return "tcp";
    case IPPROTO_UDP:
      return "udp";
    case IPPROTO_SCTP:
      return "sctp";
    default:
      return "proto " + std::to_string(protocol);
  }
}

namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

std::string DrainTarget::serviceText() const {
  if (fwmark != 0) {
    return "fwmark " + std::to_string(fwmark) + (family == Family::kInet ? " (IPv4)" : " (IPv6)");
  }
  return ipProtocolName(protocol) + " " + Endpoint{address, port}.toString();
}

std::string DrainTarget::toString() const { return serviceText() + " " + server.toString(); }

std::optional<DrainTarget> DrainTarget::parse(std::string_view line) {
  const std::vector<std::string_view> w = words(line);
  DrainTarget t;
  std::string_view server;
  if (w.size() == 4 && w[0] == "fwmark") {
    const auto [end, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), t.fwmark);
    if (ec != std::errc() || end != w[1].data() + w[1].size() || t.fwmark == 0) return std::nullopt;
    if (w[2] != "(IPv4)" && w[2] != "(IPv6)") return std::nullopt;
    t.family = w[2] == "(IPv4)" ? Family::kInet : Family::kInet6;
    server = w[3];
  } else if (w.size() == 3) {
    for (uint8_t p : {uint8_t{IPPROTO_TCP}, uint8_t{IPPROTO_UDP}, uint8_t{IPPROTO_SCTP}}) {
      if (ipProtocolName(p) == w[0]) t.protocol = p;
    }
    auto service = Endpoint::parse(w[1], false);
    if (t.protocol == 0 || !service) return std::nullopt;
    t.address = service->address;
    t.family = service->address.family;
    t.port = service->port;
    server = w[2];
  } else {
    return std::nullopt;
  }
  auto rs = Endpoint::parse(server, false);
  if (!rs && t.fwmark != 0) {
    // A firewall-mark service's real server may have no port (Endpoint then writes none).
    if (server.size() > 2 && server.substr(server.size() - 2) == ":0") {
      server.remove_suffix(2);
    }
    rs = Endpoint::parse(server, true);
    if (rs && rs->port != 0) rs.reset();
  }
  if (!rs) return std::nullopt;
  t.server = *rs;
  return t;
}

}  // namespace tandem
