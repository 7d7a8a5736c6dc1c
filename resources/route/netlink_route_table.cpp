#include "route/netlink_route_table.h"

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

NetlinkRouteTable::~NetlinkRouteTable() {
  for (auto& [name, fd] : owned_) ::close(fd);
}

Result<uint32_t> NetlinkRouteTable::ownInterface(const std::string& name) {
  if (auto it = owned_.find(name); it != owned_.end()) {
    auto index = interfaceIndex(name);
    if (index) return index;
    // Deleted behind tandem's back (ip link del): let it go and create it again.
    ::close(it->second);
    owned_.erase(it);
  }
  if (name.empty() || name.size() >= IFNAMSIZ) {
    return fail(ErrorCode::kInvalidArgument, "interface name \"" + name + "\" is not 1 to " +
                                                 std::to_string(IFNAMSIZ - 1) + " characters");
  }
  // TUNSETIFF on a name that exists would attach to that device if it were a persistent tun
  // of ours: refuse any existing interface, so tandem never adopts one it did not create.
  if (interfaceIndex(name)) {
    return fail(ErrorCode::kAlreadyExists,
                "interface " + name + " exists already and is not tandemd's own device");
  }
  const int fd = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return fail(ErrorCode::kIo, "cannot open /dev/net/tun: " + std::string(std::strerror(errno)));
  }
  ifreq ifr{};
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::memcpy(ifr.ifr_name, name.data(), name.size());
  if (::ioctl(fd, TUNSETIFF, &ifr) != 0) {
    const int e = errno;
    ::close(fd);
    return fail(e == EBUSY || e == EEXIST ? ErrorCode::kAlreadyExists : ErrorCode::kIo,
                "cannot create the tun device " + name + ": " + std::strerror(e));
  }
  owned_[name] = fd;
  auto index = interfaceIndex(name);
  if (!index) return fail(index.error());
  const uint32_t seq = channel_->nextSeq();
  auto up = channel_->acked(rtnl::encodeSetLinkUp(*index, seq), seq, "set " + name + " up");
  if (!up) return fail(up.error());
  return index;
}

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
