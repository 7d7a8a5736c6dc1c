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
  // The reconcile lists tandem's routes every few seconds. Filtered by the kernel, that is a
  // few messages even when the table is main and holds a routing daemon's full view; a kernel
  // before 4.20 refuses this and dumps the whole table, which routes() filters itself.
  const bool strict = static_cast<bool>((*channel)->checkStrictly());
  auto table = std::make_unique<NetlinkRouteTable>(std::move(*channel));
  table->strict_ = strict;
  return table;
}

NetlinkRouteTable::NetlinkRouteTable(std::unique_ptr<netlink::RtnlChannel> channel)
    : channel_(std::move(channel)) {}

NetlinkRouteTable::~NetlinkRouteTable() { releaseOwnedInterface(); }

void NetlinkRouteTable::releaseOwnedInterface() {
  if (owned_fd_ < 0) return;
  ::close(owned_fd_);  // the kernel deletes the device, and every route through it
  owned_fd_ = -1;
  owned_name_.clear();
}

Result<uint32_t> NetlinkRouteTable::ownInterface(const std::string& name) {
  if (owned_fd_ >= 0 && owned_name_ == name) {
    auto index = interfaceIndex(name);
    // A lookup that failed for another reason (a netlink error) changes nothing: closing the
    // descriptor would delete the device and its routes.
    if (!index && index.error().code != ErrorCode::kNotFound) return fail(index.error());
    if (index) {
      // Up, in case setting it up failed last time (the kernel refuses routes through a down
      // device); a no-op when it is.
      auto up = setUp(*index, name);
      if (!up) return fail(up.error());
      return index;
    }
    // Deleted behind tandem's back (ip link del): let it go and create it again.
  }
  releaseOwnedInterface();  // one device at most: another name's goes
  if (name.empty() || name.size() >= IFNAMSIZ) {
    return fail(ErrorCode::kInvalidArgument, "interface name \"" + name + "\" is not 1 to " +
                                                 std::to_string(IFNAMSIZ - 1) + " characters");
  }
  // TUNSETIFF on a name that exists would attach to that device if it were a persistent tun:
  // any existing interface is refused, so tandem never adopts one it did not create.
  if (auto existing = interfaceIndex(name); existing) {
    return fail(ErrorCode::kAlreadyExists,
                "interface " + name + " exists already and is not tandemd's own device");
  } else if (existing.error().code != ErrorCode::kNotFound) {
    return fail(existing.error());
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
  owned_fd_ = fd;
  owned_name_ = name;
  auto index = interfaceIndex(name);
  Error error;
  if (index) {
    auto up = setUp(*index, name);
    if (up) return index;
    error = up.error();
  } else {
    error = index.error();
  }
  releaseOwnedInterface();  // half made: gone, and made whole at the next try
  return fail(error);
}

Result<void> NetlinkRouteTable::setUp(uint32_t index, const std::string& name) {
  const uint32_t seq = channel_->nextSeq();
  return channel_->acked(rtnl::encodeSetLinkUp(index, seq), seq, "set " + name + " up");
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
  last_dump_size_ = 0;
  for (Family family : {Family::kInet, Family::kInet6}) {
    const std::string what =
        "list the " + std::string(familyName(family)) + " routes of table " + std::to_string(table);
    auto replies = channel_->dump(
        [&](uint32_t seq) { return rtnl::encodeDumpRoutes(family, table, protocol, seq); }, what);
    // Filtering, the kernel answers ENOENT for a table no route was ever put in: none there.
    if (!replies && strict_ && replies.error().code == ErrorCode::kNotFound) continue;
    if (!replies) return fail(replies.error());
    last_dump_size_ += replies->size();
    for (auto& m : *replies) {
      // The kernel filters by table and protocol only on a strict socket: both are checked here.
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
