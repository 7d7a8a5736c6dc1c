#pragma once

#include <memory>
#include <string>

#include "loop/dispatcher.h"
#include "netlink/rtnl_channel.h"
#include "route/route_table.h"

namespace tandem::resources::route {

// The RouteTable over an rtnetlink channel (netlink/rtnl_channel.h).
class NetlinkRouteTable final : public RouteTable {
 public:
  static Result<std::unique_ptr<NetlinkRouteTable>> open(loop::Dispatcher& dispatcher);
  explicit NetlinkRouteTable(std::unique_ptr<netlink::RtnlChannel> channel);
  ~NetlinkRouteTable() override;  // closes the owned devices: the kernel deletes them
  NetlinkRouteTable(const NetlinkRouteTable&) = delete;
  NetlinkRouteTable& operator=(const NetlinkRouteTable&) = delete;

  Result<uint32_t> interfaceIndex(const std::string& name) override;
  // A tun device (IFF_TUN, not persistent): the kernel removes it when its last descriptor, held
  // here, closes. Nothing reads it: it carries routes, not packets.
  Result<uint32_t> ownInterface(const std::string& name) override;
  void releaseOwnedInterface() override;
  Result<std::vector<rtnl::RouteEntry>> routes(uint32_t table, uint8_t protocol) override;
  Result<void> add(const rtnl::RouteRequest& req) override;
  Result<void> remove(const rtnl::RouteRequest& req) override;

  // Whether the kernel filters the listings (strict checking, Linux 4.20 and later).
  bool kernelFilters() const { return strict_; }
  // The messages the last routes() read from the kernel: with the kernel filtering, tandem's
  // own routes and the dumps' ends, however many other routes the table holds.
  size_t lastDumpSize() const { return last_dump_size_; }

 private:
  Result<void> change(bool add, const rtnl::RouteRequest& req);
  Result<void> setUp(uint32_t index, const std::string& name);

  std::unique_ptr<netlink::RtnlChannel> channel_;
  std::string owned_name_;  // the tun device this table holds, if owned_fd_ >= 0
  int owned_fd_ = -1;
  bool strict_ = false;
  size_t last_dump_size_ = 0;
};

}  // namespace tandem::resources::route
