#include "vip/netlink_address_table.h"

namespace tandem::resources {
namespace {

std::string describe(const rtnl::AddressRequest& req) {
  return req.prefix.toString() + (req.interface.empty() ? "" : " on " + req.interface);
}

}  // namespace

Result<std::unique_ptr<NetlinkAddressTable>> NetlinkAddressTable::open(
    loop::Dispatcher& dispatcher) {
  auto channel = netlink::RtnlChannel::open(dispatcher);
  if (!channel) return fail(channel.error());
  return std::unique_ptr<NetlinkAddressTable>(new NetlinkAddressTable(std::move(*channel)));
}

NetlinkAddressTable::NetlinkAddressTable(std::unique_ptr<netlink::RtnlChannel> channel)
    : channel_(std::move(channel)) {}

NetlinkAddressTable::~NetlinkAddressTable() = default;

Result<rtnl::LinkEntry> NetlinkAddressTable::getLink(std::string_view name, uint32_t ifindex,
                                                     std::string_view what) {
  ++counts_.link_queries;
  return channel_->link(name, ifindex, what);
}

Result<uint32_t> NetlinkAddressTable::interfaceIndex(const std::string& name) {
  auto link = getLink(name, 0, "look up interface " + name);
  if (!link) {
    if (link.error().code == ErrorCode::kNotFound) {
      return fail(ErrorCode::kNotFound, "interface " + name + " does not exist");
    }
    return fail(link.error());
  }
  return link->ifindex;
}

Result<std::string> NetlinkAddressTable::interfaceName(uint32_t ifindex) {
  auto link = getLink("", ifindex, "look up interface index " + std::to_string(ifindex));
  if (!link) return fail(link.error());
  return link->name;
}

Result<std::vector<rtnl::AddressEntry>> NetlinkAddressTable::addresses(Family family) {
  const std::string what = "list " + std::string(familyName(family)) + " addresses";
  auto replies = channel_->dump(
      [&](uint32_t seq) {
        ++counts_.dumps;
        return rtnl::encodeDumpAddresses(family, seq);
      },
      what);
  if (!replies) return fail(replies.error());
  std::vector<rtnl::AddressEntry> out;
  for (auto& m : *replies) {
    if (m.kind == rtnl::Message::Kind::kAddress) out.push_back(std::move(m.address));
  }
  return out;
}

Result<void> NetlinkAddressTable::change(bool add, const rtnl::AddressRequest& req) {
  const std::string what = (add ? "cannot add " : "cannot remove ") + describe(req);
  const uint32_t seq = channel_->nextSeq();
  auto bytes = add ? rtnl::encodeNewAddress(req, seq) : rtnl::encodeDeleteAddress(req, seq);
  if (!bytes) return fail(bytes.error().code, what + ": " + bytes.error().message);
  if (add) {
    ++counts_.adds;
  } else {
    ++counts_.removes;
  }
  return channel_->acked(*bytes, seq, what);
}

Result<void> NetlinkAddressTable::add(const rtnl::AddressRequest& req) { return change(true, req); }

Result<void> NetlinkAddressTable::remove(const rtnl::AddressRequest& req) {
  return change(false, req);
}

}  // namespace tandem::resources
