#pragma once

#include <map>
#include <set>
#include <vector>

#include "ipvs/ipvs_model.h"

// The IPVS reconcile planner: the desired table against the dumped one gives the fewest kernel
// requests that turn one into the other, in an order the kernel accepts and that never leaves
// a kept service with fewer destinations than it needs on the way. Pure.
namespace tandem::resources::ipvs {

// What the kernel lets a request change in place (net/netfilter/ipvs/ip_vs_ctl.c):
//  - IPVS_CMD_SET_SERVICE (ip_vs_edit_service) sets the scheduler, flags, persistence timeout,
//    netmask and persistence engine; only the key (af, protocol, address, port, fwmark) is
//    fixed, and a new key is a new service.
//  - IPVS_CMD_SET_DEST (ip_vs_edit_dest -> __ip_vs_update_dest) sets weight, forwarding
//    (conn_flags), thresholds and the tunnel type, port and flags; the destination is found by
//    (af, address, port), so only a new family forces delete + add.
//
// The order, per desired service in key order:
//   1. add the service, or edit it in place;
//   2. for each of its destinations: add, or edit in place (delete + add for a family change);
//   3. delete the destinations it no longer has (after the adds, so a service whose servers
//      are swapped keeps one to schedule to throughout);
// then, last, delete the services no longer wanted (the kernel drops their destinations with
// them: no request per destination).
//
// Services in actual but not in desired are deleted only when manage_all ([ipvs] manage =
// "all"), or when their key is in retired (services tandem itself put there and the config no
// longer has); any other is left alone. Within a service tandem keeps, it owns every
// destination. The HASHED service flag (kernel bookkeeping) and counters are ignored, and a
// netmask of 0 equals the whole address. Neither table needs to be sorted.
std::vector<Op> plan(const Table& desired, const Table& actual, bool manage_all,
                     const std::set<ServiceKey>& retired = {});

// plan() in steps, for a caller that must not hold its loop for a whole table: the same requests
// in the same order, a few desired services at a time. The tables and retired are referenced,
// not copied, and must not change until done() (sending nothing before the plan is complete
// keeps them so).
class Planner {
 public:
  Planner(const Table& desired, const Table& actual, bool manage_all,
          const std::set<ServiceKey>& retired);
  // Appends the requests of up to `services` more desired services to ops; after the last one,
  // the deletions of services. True when the plan is complete.
  bool next(size_t services, std::vector<Op>& ops);
  bool done() const { return done_; }

 private:
  bool manage_all_;
  const std::set<ServiceKey>& retired_;
  std::map<ServiceKey, const ServiceState*> have_;
  std::map<ServiceKey, const ServiceState*> want_;
  std::map<ServiceKey, const ServiceState*>::const_iterator at_;
  bool done_ = false;
};

// The table after the kernel carried out op (which it acknowledged): what the reconciler expects
// the kernel to hold without dumping it. A service or destination the op names but the table
// lacks (or already has, for an add) is treated as the kernel would end up: added, edited or
// gone. Keeps services and destinations in key order.
void applyOp(Table& table, const Op& op);

// The service fields ip_vs_edit_service sets, compared without kernel bookkeeping bits; a
// netmask of 0 is the same as the whole address (255.255.255.255 or /128).
bool sameService(const Service& a, const Service& b);

}  // namespace tandem::resources::ipvs
