#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "election/cluster_core.h"

namespace tandem::ipc {

// The heartbeat receiver's counters, by reason name (wire::name(Rejection)), so this library
// needs nothing from the wire codec.
struct FrameStats {
  uint64_t accepted = 0;
  std::map<std::string, uint64_t> rejected;
};

// The status document of protocol.h from the core's view of the cluster. Pure.
nlohmann::json statusJson(const std::string& cluster, const election::CoreStatus& status,
                          const FrameStats& frames);

}  // namespace tandem::ipc
