#pragma once

#include "election/cluster_core.h"
#include "wire/receiver.h"

// What a received, accepted frame does to this node's ClusterCore: the one step between the
// wire and the election, shared by ClusterNode and the frame-apply fuzz target. Pure.
namespace tandem::cluster {

// A heartbeat speaks for the frame's sender and incarnation (never for the names its payload
// carries); a "released" frame is the sender's handover in its epoch; a release request and
// admin frames change nothing here.
election::Actions applyMessage(election::ClusterCore& core, election::Time now,
                               const wire::Message& m);

}  // namespace tandem::cluster
