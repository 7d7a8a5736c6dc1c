#pragma once

#include <memory>

#include "common/duration.h"
#include "loop/dispatcher.h"
#include "netlink/rtnl_channel.h"
#include "vip/address_table.h"

namespace tandem::resources {

// The AddressTable over an rtnetlink channel (netlink/rtnl_channel.h: synchronous without
// waiting, and why that does not block the loop).
class NetlinkAddressTable final : public AddressTable {
 public:
  static Result<std::unique_ptr<NetlinkAddressTable>> open(loop::Dispatcher& dispatcher);
  ~NetlinkAddressTable() override;
  NetlinkAddressTable(const NetlinkAddressTable&) = delete;
  NetlinkAddressTable& operator=(const NetlinkAddressTable&) = delete;

  Result<uint32_t> interfaceIndex(const std::string& name) override;
  Result<std::string> interfaceName(uint32_t ifindex) override;
  Result<std::vector<rtnl::AddressEntry>> addresses(Family family) override;
  Result<void> add(const rtnl::AddressRequest& req) override;
  Result<void> remove(const rtnl::AddressRequest& req) override;

  // How many requests were written to the kernel, by kind; tests count them to show that
  // adopting an address writes nothing.
  struct Counts {
    uint64_t adds = 0;
    uint64_t removes = 0;
    uint64_t dumps = 0;
    uint64_t link_queries = 0;
  };
  const Counts& counts() const { return counts_; }

 private:
  explicit NetlinkAddressTable(std::unique_ptr<netlink::RtnlChannel> channel);

  Result<rtnl::LinkEntry> getLink(std::string_view name, uint32_t ifindex, std::string_view what);
  Result<void> change(bool add, const rtnl::AddressRequest& req);

  std::unique_ptr<netlink::RtnlChannel> channel_;
  Counts counts_;
};

}  // namespace tandem::resources
