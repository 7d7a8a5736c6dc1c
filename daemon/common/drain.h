#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ip_address.h"

// A drained real server: an operator set its weight to 0 in one virtual service, cluster wide
// (`tandem real drain`). What the heartbeats carry (wire/heartbeat.h), what every director's
// IPVS table applies over the health checks' weights, and what is kept in STATE_DIR/drains.
// The service is named as the kernel names it (protocol, address and port, or firewall mark
// and family), so that a reload which renames a [[virtual_server]] keeps its drains.
namespace tandem {

// "tcp", "udp", "sctp" for IPPROTO_TCP, _UDP, _SCTP; another protocol as "proto N". The one
// wording of a service's protocol (IPVS's model, the drains, the logs).
std::string ipProtocolName(uint16_t protocol);

// At most this many at once: the set rides in every heartbeat, whose payload is 1 KiB.
inline constexpr size_t kMaxDrains = 16;

struct DrainTarget {
  Family family = Family::kInet;  // the service's
  uint8_t protocol = 0;           // IPPROTO_TCP / _UDP / _SCTP; 0 for a firewall-mark service
  IpAddress address;              // the service's; unset (all zero) for a firewall mark
  uint16_t port = 0;
  uint32_t fwmark = 0;  // 0: an address service
  Endpoint server;      // the real server

  auto operator<=>(const DrainTarget&) const = default;
  // "tcp 198.51.100.50:80 203.0.113.10:80", "fwmark 7 (IPv4) 203.0.113.10:80": one line of
  // STATE_DIR/drains, and what logs say.
  std::string toString() const;
  // The service part alone, as `tandem ipvs show` keys it: "tcp 198.51.100.50:80",
  // "fwmark 7 (IPv4)".
  std::string serviceText() const;
  static std::optional<DrainTarget> parse(std::string_view line);
};

// How far a drain has come in one director's IPVS table: the real server's connections and
// the persistence templates that point at it, from the table's last dump. Unknown until a dump
// has shown the server at weight 0 (before that, the counts could be of a server still taking
// new connections).
struct DrainProgress {
  std::optional<uint32_t> active;     // active connections (ESTABLISHED and the like)
  std::optional<uint32_t> templates;  // persistence templates
  auto operator<=>(const DrainProgress&) const = default;
  bool done() const { return active == 0u && templates == 0u; }
};

// How the cluster, which keeps the set, reaches the IPVS table, which applies it.
struct DrainHooks {
  std::function<void(const std::vector<DrainTarget>&)> apply;
  std::function<DrainProgress(const DrainTarget&)> progress;
};

}  // namespace tandem
