#pragma once

#include <memory>

#include "common/duration.h"
#include "loop/dispatcher.h"
#include "netlink/netlink_socket.h"
#include "vip/address_table.h"

namespace tandem::resources {

// The AddressTable over the NETLINK_ROUTE socket of resources/netlink: a dumb pipe for the
// bytes that rtnl_codec.h builds and reads.
//
// Synchronous without waiting, on purpose. rtnetlink handles a request inside the sender's
// sendmsg() (under the RTNL lock), so by the time send returns the ack, or the first part of a
// dump, is already queued on the socket, and the rest of a dump is produced inside the next
// recvmsg(). NetlinkSocket::exchangeNow reads exactly that and never polls: an answer that is
// not there is a kTimeout error at once, not a wait on the loop. What can stall is taking the
// RTNL lock itself, and that stalls an asynchronous sender just the same, inside its sendmsg().
// A late answer to a failed request is told apart by its sequence number and dropped.
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
  explicit NetlinkAddressTable(std::unique_ptr<netlink::NetlinkSocket> socket);

  // Sends one request (its header carries seq) and collects its replies, up to the ack, the
  // link reply or the end of the dump.
  Result<std::vector<rtnl::Message>> transact(const std::vector<uint8_t>& request, uint32_t seq,
                                              std::string_view what);
  Result<rtnl::LinkEntry> getLink(std::string_view name, uint32_t ifindex, std::string_view what);
  Result<void> change(bool add, const rtnl::AddressRequest& req);

  std::unique_ptr<netlink::NetlinkSocket> socket_;
  Counts counts_;
};

}  // namespace tandem::resources
