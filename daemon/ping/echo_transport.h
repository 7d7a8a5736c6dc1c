#pragma once

#include <functional>
#include <memory>
#include <span>

#include "common/ip_address.h"
#include "common/result.h"

namespace tandem::ping {

// What the pinger sees of the OS: send an ICMP(v6) message to an address, get the echo replies
// that arrive. Production uses raw sockets (raw_echo_transport.h); tests a fake.
class EchoTransport {
 public:
  virtual ~EchoTransport() = default;
  // Sends one message as buildEchoRequest made it. Fails when the kernel refuses it at once
  // (no route, interface down); a lost packet is only noticed by its missing reply.
  [[nodiscard]] virtual Result<void> send(const IpAddress& to, std::span<const uint8_t> icmp) = 0;
};

// An ICMP(v6) message that arrived (an IPv4 header already stripped), on the dispatcher.
using OnIcmp = std::function<void(const IpAddress& from, std::span<const uint8_t> icmp)>;

// Opens the transport for the given families, delivering what arrives to the callback.
using MakeEchoTransport =
    std::function<Result<std::unique_ptr<EchoTransport>>(bool ipv4, bool ipv6, OnIcmp)>;

}  // namespace tandem::ping
