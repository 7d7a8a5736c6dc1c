#include "route/netlink_route_table.h"

#include <string>

namespace tandem::resources::route {
namespace {

std::string describe(const rtnl::RouteRequest& req) {
  std::string s = req.prefix.toString() + " (table " + std::to_string(req.table) + ", protocol " +
                  std::to_string(req.protocol);
  if (req.metric != 0) s += ", metric " + std::to_string(req.metric);
  return s + (req.ifindex == 0 ? ", blackhole)"
                               : ", interface index " + std::to_string(req.ifindex) + ")");
}

}  // namespace

Result<std::unique_ptr<NetlinkRouteTable>> NetlinkRouteTable::open(loop::Dispatcher& dispatcher) {
  auto channel = netlink::RtnlChannel::open(dispatcher);
  if (!channel) return fail(channel.error());
  return std::make_unique<NetlinkRouteTable>(std::move(*channel));
}

NetlinkRouteTable::NetlinkRouteTable(std::unique_ptr<netlink::RtnlChannel> channel)
    : channel_(std::move(channel)) {}

Result<uint32_t> NetlinkRouteTable::interfaceIndex(const std::string& name) {
  auto link = channel_->link(name, 0, "look up interface " + name);
  if (!link) {
    if (link.error().code == ErrorCode::kNotFound) {
      return fail(ErrorCode::kNotFound, "interface " + name + " does not exist");
    }
    return fail(link.error());
  }
  return link->ifindex;
}

Result<std::vector<rtnl::RouteEntry>> NetlinkRouteTable::routes(uint32_t table, uint8_t protocol) {
  std::vector<rtnl::RouteEntry> out;
  for (Family family : {Family::kInet, Family::kInet6}) {
    const std::string what =
        "list the " + std::string(familyName(family)) + " routes of table " + std::to_string(table);
    auto replies = channel_->dump(
        [&](uint32_t seq) { return rtnl::encodeDumpRoutes(family, table, seq); }, what);
    if (!replies) return fail(replies.error());
    for (auto& m : *replies) {
      // The kernel filters by table only when the socket asked for strict checking: both are
      // checked here.
      if (m.kind != rtnl::Message::Kind::kRoute || m.route.table != table ||
          m.route.protocol != protocol) {
        continue;
      }
      out.push_back(m.route);
    }
  }
  return out;
}

Result<void> NetlinkRouteTable::change(bool add, const rtnl::RouteRequest& req) {
  const std::string what = (add ? "cannot add route " : "cannot remove route ") + describe(req);
  const uint32_t seq = channel_->nextSeq();
  auto bytes = add ? rtnl::encodeNewRoute(req, seq) : rtnl::encodeDeleteRoute(req, seq);
  if (!bytes) return fail(bytes.error().code, what + ": " + bytes.error().message);
  return channel_->acked(*bytes, seq, what);
}

Result<void> NetlinkRouteTable::add(const rtnl::RouteRequest& req) { return change(true, req); }

Result<void> NetlinkRouteTable::remove(const rtnl::RouteRequest& req) { return change(false, req); }

}  // namespace tandem::resources::route
