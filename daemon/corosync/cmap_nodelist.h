#pragma once

#include <vector>

#include "common/duration.h"
#include "common/result.h"
#include "corosync/nodelist.h"

// One-shot reads of corosync's configuration map (libcmap). Each opens its own connection and
// closes it: they run at start-up and on reload, not on the hot path, and a short-lived
// connection has nothing to reconnect. Each is a few local IPC round trips.
namespace tandem::corosync {

// nodelist.node.N.{nodeid,name,ring0_addr}.
[[nodiscard]] Result<std::vector<NodelistEntry>> readNodelist();

// runtime.config.totem.token: the effective token timeout, token_coefficient included.
[[nodiscard]] Result<Millis> readTotemToken();

// The nodelist and the effective totem timers over one connection.
[[nodiscard]] Result<CorosyncConfig> readCorosyncConfig();

}  // namespace tandem::corosync
