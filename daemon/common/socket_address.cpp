#include "common/socket_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace tandem {

SocketAddress toSocketAddress(const IpAddress& address, uint16_t port) {
  SocketAddress sa;
  if (address.family == Family::kInet) {
    auto* in = reinterpret_cast<sockaddr_in*>(&sa.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    std::memcpy(&in->sin_addr, address.bytes.data(), 4);
    sa.length = sizeof(sockaddr_in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&sa.storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    std::memcpy(&in6->sin6_addr, address.bytes.data(), 16);
    sa.length = sizeof(sockaddr_in6);
  }
  return sa;
}

IpAddress fromSocketAddress(const sockaddr_storage& sa) {
  IpAddress a;
  if (sa.ss_family == AF_INET6) {
    a.family = Family::kInet6;
    std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in6&>(sa).sin6_addr, 16);
  } else {
    std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in&>(sa).sin_addr, 4);
  }
  return a;
}

}  // namespace tandem
