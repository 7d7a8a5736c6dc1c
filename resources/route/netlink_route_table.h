#pragma once

#include <memory>

#include "loop/dispatcher.h"
#include "netlink/rtnl_channel.h"
#include "route/route_table.h"

namespace tandem::resources::route {

// The RouteTable over an rtnetlink channel (netlink/rtnl_channel.h).
class NetlinkRouteTable final : public RouteTable {
 public:
  static Result<std::unique_ptr<NetlinkRouteTable>> open(loop::Dispatcher& dispatcher);
  explicit NetlinkRouteTable(std::unique_ptr<netlink::RtnlChannel> channel);

  Result<uint32_t> interfaceIndex(const std::string& name) override;
  Result<std::vector<rtnl::RouteEntry>> routes(uint32_t table, uint8_t protocol) override;
  Result<void> add(const rtnl::RouteRequest& req) override;
  Result<void> remove(const rtnl::RouteRequest& req) override;

 private:
  Result<void> change(bool add, const rtnl::RouteRequest& req);

  std::unique_ptr<netlink::RtnlChannel> channel_;
};

}  // namespace tandem::resources::route
