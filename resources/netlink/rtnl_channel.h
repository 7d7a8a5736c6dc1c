#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "loop/dispatcher.h"
#include "netlink/netlink_socket.h"
#include "netlink/rtnl_codec.h"

namespace tandem::resources::netlink {

// One NETLINK_ROUTE socket's requests and their replies, for the kernel shells that manage
// addresses (vip/netlink_address_table.h) and routes (route/netlink_route_table.h): a dumb pipe
// for the bytes rtnl_codec.h builds and reads.
//
// Synchronous without waiting, on purpose. rtnetlink handles a request inside the sender's
// sendmsg() (under the RTNL lock), so by the time send returns the ack, or the first part of a
// dump, is already queued on the socket, and the rest of a dump is produced inside the next
// recvmsg(). NetlinkSocket::exchangeNow reads exactly that and never polls: an answer that is
// not there is a kTimeout error at once, not a wait on the loop. What can stall is taking the
// RTNL lock itself, and that stalls an asynchronous sender just the same, inside its sendmsg().
// A late answer to a failed request is told apart by its sequence number and dropped.
class RtnlChannel {
 public:
  static Result<std::unique_ptr<RtnlChannel>> open(loop::Dispatcher& dispatcher);
  explicit RtnlChannel(std::unique_ptr<NetlinkSocket> socket);

  uint32_t nextSeq() { return socket_->nextSeq(); }
  // Strict checking on this channel's socket (NetlinkSocket::checkStrictly): dumps filtered
  // by the kernel. Every request sent on it must then be one the kernel's strict checks pass.
  [[nodiscard]] Result<void> checkStrictly() { return socket_->checkStrictly(); }

  // Sends one request (its header carries seq) and collects its replies, up to the ack, a
  // single-part reply or the end of the dump.
  Result<std::vector<rtnl::Message>> transact(const std::vector<uint8_t>& request, uint32_t seq,
                                              std::string_view what);
  // A request the kernel acks: success, or the ack's error in rtnl::ackError's words.
  Result<void> acked(const std::vector<uint8_t>& request, uint32_t seq, std::string_view what);
  // One interface, by name (ifindex 0) or by index (empty name); kNotFound when there is none.
  Result<rtnl::LinkEntry> link(std::string_view name, uint32_t ifindex, std::string_view what);
  // A dump, built by encode for each sequence number, asked again (3 times at most) while the
  // kernel says the table changed under it. what: "list IPv4 addresses".
  Result<std::vector<rtnl::Message>> dump(
      const std::function<std::vector<uint8_t>(uint32_t seq)>& encode, std::string_view what);

 private:
  std::unique_ptr<NetlinkSocket> socket_;
};

}  // namespace tandem::resources::netlink
