#pragma once

#include <sys/socket.h>

#include <optional>
#include <string>

#include "common/ip_address.h"
#include "common/socket_address.h"
#include "health/checker.h"

// The socket a probe opens to its real server: non-blocking, close-on-exec, bound to the check's
// source_address when one is set. Shared by every checker that talks to the real server itself,
// so that "probes leave from source_address" holds for all of them alike. Where the kernel is
// touched.
namespace tandem::resources::health {

using tandem::SocketAddress;
using tandem::toSocketAddress;

// A socket of `type` (SOCK_STREAM, SOCK_DGRAM) for probing target.address, bound to
// target.check.source_address if set. On failure: -1, and `reason` says why in an operator's
// words ("cannot bind to 198.51.100.9: cannot assign requested address").
int openProbeSocket(const ProbeTarget& target, int type, std::string& reason);

}  // namespace tandem::resources::health
