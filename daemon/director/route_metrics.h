#pragma once

#include <nlohmann/json.hpp>

#include "metrics/exposition.h"

// The series of route health injection (conf/metrics.md, "Routes"), written from the route
// subsystem's part of the status: what it already holds, so a scrape asks the kernel nothing.
// Glue in the director for now; RouteSubsystem::writeMetrics is where it belongs once that
// subsystem's files are free to change, and this goes then. Pure: JSON in, text out.
namespace tandem::director {

// routes: the status's "routes" object ({mode, table, ..., services: [...]}, ipc/protocol.h).
// Nothing when it is null or not an object (no virtual server has a route). A service entry
// without a string "service" and "route" is skipped; a counter that is not an unsigned integer
// is left out rather than made up.
void writeRouteMetrics(metrics::Exposition& out, const nlohmann::json& routes);

}  // namespace tandem::director
