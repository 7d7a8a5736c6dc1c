#include "health/probe_socket.h"

#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "health/reasons.h"

namespace tandem::resources::health {

int openProbeSocket(const ProbeTarget& target, int type, std::string& reason) {
  const int family = target.address.address.family == Family::kInet ? AF_INET : AF_INET6;
  int fd = ::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    reason = "cannot open a socket: " + errnoReason(errno);
    return -1;
  }
  if (const auto& source = target.check.source_address) {
    // Before connect(), so the kernel neither picks another source nor an ephemeral port
    // bound to one (IP_BIND_ADDRESS_NO_PORT keeps the port choice for connect()).
    int one = 1;
    (void)::setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    SocketAddress sa = toSocketAddress(*source, 0);
    if (::bind(fd, sa.get(), sa.length) != 0) {
      reason = "cannot bind to " + source->toString() + ": " + errnoReason(errno);
      ::close(fd);
      return -1;
    }
  }
  return fd;
}

}  // namespace tandem::resources::health
