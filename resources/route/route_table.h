#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "netlink/rtnl_codec.h"

namespace tandem::resources::route {

// The kernel's routing tables, as much of them as route health injection needs. Production
// talks rtnetlink (netlink_route_table.h); tests use a fake (test/resources/fake_route_table.h).
// Synchronous and bounded, as the address table is (netlink/rtnl_channel.h says why).
class RouteTable {
 public:
  virtual ~RouteTable() = default;

  // kNotFound when there is no such interface.
  virtual Result<uint32_t> interfaceIndex(const std::string& name) = 0;
  // Creates interface `name`, up, as a device that exists only as long as this table does: the
  // kernel deletes it, and every route through it, when the process ends, even by SIGKILL.
  // Asked again for a name it owns already, returns that device's index. kAlreadyExists when an
  // interface of that name exists and is not this table's. The table owns one device at most:
  // one it owned under another name is deleted.
  virtual Result<uint32_t> ownInterface(const std::string& name) = 0;
  // Deletes the device this table owns, if any (a reload that no longer asks for one).
  virtual void releaseOwnedInterface() = 0;
  // The routes of both families in `table` whose origin is `protocol`: tandem's own.
  virtual Result<std::vector<rtnl::RouteEntry>> routes(uint32_t table, uint8_t protocol) = 0;
  // kAlreadyExists when it is there already; kNotFound when the interface is gone.
  virtual Result<void> add(const rtnl::RouteRequest& req) = 0;
  // kNotFound when it is not there.
  virtual Result<void> remove(const rtnl::RouteRequest& req) = 0;
};

}  // namespace tandem::resources::route
