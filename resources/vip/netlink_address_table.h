#pragma once

#include <memory>

#include "common/duration.h"
#include "vip/address_table.h"

struct mnl_socket;

namespace tandem::resources {

// The AddressTable over a NETLINK_ROUTE socket (libmnl): a dumb pipe for the bytes that
// rtnl_codec.h builds and reads.
//
// Synchronous, with a strict deadline per request, on purpose. rtnetlink handles a request
// inside the sender's sendmsg() (under the RTNL lock), so by the time send returns the ack or
// the whole dump is already queued on the socket: there is nothing to wait for that an fd
// watch on the loop would overlap. What can stall is taking the RTNL lock itself, and that
// stalls an asynchronous sender just the same, inside its sendmsg(). The deadline bounds the
// rest (a lost answer, a socket in a bad state); a late answer to a timed-out request is told
// apart by its sequence number and dropped.
class NetlinkAddressTable final : public AddressTable {
 public:
  static Result<std::unique_ptr<NetlinkAddressTable>> open(Millis timeout = Millis(1000));
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
  NetlinkAddressTable(mnl_socket* nl, Millis timeout);

  // Sends one request and collects the replies that carry its sequence number, up to the ack,
  // the link reply or the end of the dump.
  Result<std::vector<rtnl::Message>> transact(const std::vector<uint8_t>& request,
                                              std::string_view what);
  Result<rtnl::LinkEntry> getLink(std::string_view name, uint32_t ifindex, std::string_view what);
  Result<void> change(bool add, const rtnl::AddressRequest& req);

  mnl_socket* nl_;
  uint32_t portid_;
  uint32_t seq_;
  Millis timeout_;
  Counts counts_;
};

}  // namespace tandem::resources
