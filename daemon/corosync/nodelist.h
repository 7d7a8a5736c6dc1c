#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/duration.h"
#include "common/result.h"

// The cluster as corosync's configuration describes it, as plain values (read by
// cmap_nodelist.h), and the pure lookups the daemon does on them.
namespace tandem::corosync {

struct NodelistEntry {
  uint32_t nodeid = 0;
  std::string name;        // nodelist.node.N.name; may be empty
  std::string ring0_addr;  // an address or a host name, as written in corosync.conf
  auto operator<=>(const NodelistEntry&) const = default;
};

struct CorosyncConfig {
  std::vector<NodelistEntry> nodes;  // in nodelist order
  // The effective token timeout: totem.token plus token_coefficient for each node past two.
  // With consensus it bounds how fast a dead node is noticed (token + consensus).
  Millis token{0};
  Millis consensus{0};
};

// Builds the nodelist from cmap's "nodelist.node.<N>.<field>" keys (values already rendered as
// text). Fields tandem does not use (ring1_addr, quorum_votes, ...) are ignored. Fails for a
// node without a valid nodeid (knet requires one) or two nodes with the same nodeid.
[[nodiscard]] Result<std::vector<NodelistEntry>> parseNodelist(
    const std::map<std::string, std::string>& keys);

// The name a node goes by in logs and status output: its configured name, else its ring0_addr
// (what corosync itself shows), nullopt for a nodeid not in the list.
[[nodiscard]] std::optional<std::string> nodeNameFor(const std::vector<NodelistEntry>& nodes,
                                                     uint32_t nodeid);

}  // namespace tandem::corosync
