#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/drain.h"
#include "common/sync_report.h"
#include "core/subsystem.h"
#include "health/health_subsystem.h"
#include "platform/platform.h"

// The parts of a director besides the cluster, in the order they are configured and asked for
// status. A new subsystem (health checks, connection sync, metrics) is one line in
// subsystem_registry.cpp: the director itself does not change.
namespace tandem::director {

// How the parts reach the director's cluster: what they say about this director's fitness.
struct SubsystemLinks {
  // The share of healthy real servers, per mille (ClusterNode::setServiceHealth).
  std::function<void(int permille)> service_health;
  // Connection sync on this director after each pass (ClusterNode::setSyncState).
  std::function<void(const SyncReport&)> sync_state;
  // A real server went up or down (the history).
  std::function<void(const resources::health::HealthEvent&)> health_event;
};

// drains: filled with how the cluster's drains reach the IPVS table.
std::vector<std::unique_ptr<resources::Subsystem>> buildSubsystems(platform::Platform& platform,
                                                                   const std::string& self,
                                                                   SubsystemLinks links,
                                                                   DrainHooks* drains);

}  // namespace tandem::director
