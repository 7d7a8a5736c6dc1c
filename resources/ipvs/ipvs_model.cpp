#include "ipvs/ipvs_model.h"

#include <netinet/in.h>

#include "common/drain.h"

namespace tandem::resources::ipvs {
std::string protocolName(uint16_t p) { return ipProtocolName(p); }

std::string syncStateName(SyncState s) { return s == SyncState::kMaster ? "master" : "backup"; }

std::string forwardName(Forward f) {
  switch (f) {
    case Forward::kMasq:
      return "nat";
    case Forward::kLocal:
      return "local";
    case Forward::kTunnel:
      return "tun";
    case Forward::kDirectRoute:
      return "dr";
    case Forward::kBypass:
      return "bypass";
  }
  return "forward-" + std::to_string(static_cast<uint32_t>(f));
}

std::string tunnelName(Tunnel t) {
  switch (t) {
    case Tunnel::kIpip:
      return "ipip";
    case Tunnel::kGue:
      return "gue";
    case Tunnel::kGre:
      return "gre";
  }
  return "tunnel-" + std::to_string(static_cast<unsigned>(t));
}

namespace {

std::string netmaskText(const Service& s) {
  if (s.key.family == Family::kInet6) return "/" + std::to_string(s.netmask);
  const uint32_t m = s.netmask;
  return std::to_string(m >> 24) + "." + std::to_string((m >> 16) & 255) + "." +
         std::to_string((m >> 8) & 255) + "." + std::to_string(m & 255);
}

std::string serviceSettings(const Service& s) {
  std::string out = " " + s.scheduler;
  // IP_VS_SVC_F_PERSISTENT
  if ((s.flags & 0x1U) != 0) out += " persistent " + std::to_string(s.timeout_s) + "s";
  if (s.netmask != 0) out += " netmask " + netmaskText(s);
  // Every other flag (one-packet, the scheduler flags) in hex, as the kernel holds them.
  if ((s.flags & ~0x1U) != 0) {
    static const char* digits = "0123456789abcdef";
    std::string hex;
    for (uint32_t v = s.flags & ~0x1U; v != 0; v >>= 4) hex.insert(hex.begin(), digits[v & 15]);
    out += " flags 0x" + hex;
  }
  if (!s.pe_name.empty()) out += " pe " + s.pe_name;
  return out;
}

std::string destSettings(const Destination& d) {
  std::string out = " " + forwardName(d.forward);
  if (d.forward == Forward::kTunnel) {
    out += " " + tunnelName(d.tunnel_type);
    if (d.tunnel_port != 0) out += " port " + std::to_string(d.tunnel_port);
  }
  out += " weight " + std::to_string(d.weight);
  if (d.upper_threshold != 0) out += " upper " + std::to_string(d.upper_threshold);
  if (d.lower_threshold != 0) out += " lower " + std::to_string(d.lower_threshold);
  return out;
}

}  // namespace

std::string ServiceKey::toString() const {
  if (fwmark != 0) {
    return "fwmark " + std::to_string(fwmark) + (family == Family::kInet ? " (ipv4)" : " (ipv6)");
  }
  return protocolName(protocol) + " " + hostPort(address, port);
}

std::string Op::toString() const {
  const std::string svc = service.key.toString();
  const std::string dst = dest ? hostPort(dest->key.address, dest->key.port) : "(none)";
  switch (kind) {
    case Kind::kAddService:
      return "add service " + svc + serviceSettings(service);
    case Kind::kEditService:
      return "edit service " + svc + serviceSettings(service);
    case Kind::kDelService:
      return "delete service " + svc;
    case Kind::kAddDest:
      return "add dest " + dst + " to " + svc + (dest ? destSettings(*dest) : "");
    case Kind::kEditDest:
      return "edit dest " + dst + " of " + svc + (dest ? destSettings(*dest) : "");
    case Kind::kDelDest:
      return "delete dest " + dst + " from " + svc;
  }
  return "unknown op on " + svc;
}

}  // namespace tandem::resources::ipvs
