#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/ip_address.h"
#include "common/result.h"
#include "netlink/rtnl_codec.h"

namespace tandem::resources {

// The kernel's interface addresses, as much of them as a VIP needs. Production talks rtnetlink
// (netlink_address_table.h); tests use a fake table (test/resources/fake_address_table.h).
//
// Calls are synchronous and bounded by a timeout: the kernel handles an rtnetlink request in
// the sender's own context, so the answer is queued before send returns (see
// netlink_address_table.h for why this does not block the loop in practice).
class AddressTable {
 public:
  virtual ~AddressTable() = default;

  // kNotFound when there is no such interface.
  virtual Result<uint32_t> interfaceIndex(const std::string& name) = 0;
  virtual Result<std::string> interfaceName(uint32_t ifindex) = 0;
  // Every address of one family, on every interface.
  virtual Result<std::vector<rtnl::AddressEntry>> addresses(Family family) = 0;
  // kAlreadyExists when it is there already; kNotFound when the interface is gone.
  virtual Result<void> add(const rtnl::AddressRequest& req) = 0;
  // kNotFound when it is not there.
  virtual Result<void> remove(const rtnl::AddressRequest& req) = 0;
};

}  // namespace tandem::resources
