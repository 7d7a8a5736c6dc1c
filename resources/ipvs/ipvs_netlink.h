#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "common/duration.h"
#include "ipvs/ipvs_codec.h"
#include "ipvs/ipvs_model.h"

struct mnl_socket;

namespace tandem::resources::ipvs {

// The Kernel over a NETLINK_GENERIC socket (libmnl): a dumb pipe for the bytes that
// ipvs_codec.h builds and reads. open() resolves the IPVS family id; a kernel without IPVS
// is kUnavailable there, naming the module to load.
//
// Synchronous, with a strict deadline per request, like the VIP shell
// (vip/netlink_address_table.h): IPVS handles a request inside the sender's sendmsg() (under
// its own mutex), so the ack or the whole dump is queued by the time send returns. The deadline
// bounds a lost answer; a late answer to a timed-out request is told apart by its sequence
// number and dropped.
class NetlinkKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<NetlinkKernel>> open(Millis timeout = Millis(1000));
  ~NetlinkKernel() override;
  NetlinkKernel(const NetlinkKernel&) = delete;
  NetlinkKernel& operator=(const NetlinkKernel&) = delete;

  // Services in key order, each with its destinations in key order.
  Result<Table> dump() override;
  Result<void> apply(const Op& op) override;
  Result<Timeouts> timeouts() override;
  Result<void> setTimeouts(const Timeouts& t) override;
  uint64_t writes() const override { return writes_; }

  // Removes every service (IPVS_CMD_FLUSH): for tests only, tandem never flushes a table.
  Result<void> flush();
  uint16_t familyId() const { return family_id_; }

 private:
  NetlinkKernel(mnl_socket* nl, Millis timeout);

  // Sends one request and collects the replies that carry its sequence number, up to the ack
  // or the end of the dump.
  // A failing ack is the error, mapped by codec::opError when op is given, else ackError.
  Result<std::vector<codec::Message>> transact(const std::vector<uint8_t>& request,
                                               std::string_view what, const Op* op = nullptr);
  Result<std::vector<DestinationState>> dumpDests(const ServiceKey& key);

  mnl_socket* nl_;
  uint32_t portid_;
  uint32_t seq_ = 0;
  uint16_t family_id_ = 0;
  Millis timeout_;
  uint64_t writes_ = 0;
  std::vector<uint64_t> rx_;  // the receive buffer (8-byte aligned for the netlink headers)
};

}  // namespace tandem::resources::ipvs
