#pragma once

#include <sys/socket.h>

#include <cstdint>

#include "common/ip_address.h"

// An IpAddress and port as the socket calls take them, and back: one conversion for every
// shell that binds, connects or receives (health probes, the sync listener).
namespace tandem {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  sockaddr* get() { return reinterpret_cast<sockaddr*>(&storage); }
};

SocketAddress toSocketAddress(const IpAddress& address, uint16_t port);
// The address of an AF_INET or AF_INET6 sockaddr (recvfrom's source).
IpAddress fromSocketAddress(const sockaddr_storage& sa);

}  // namespace tandem
