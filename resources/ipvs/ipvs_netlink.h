#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/duration.h"
#include "ipvs/ipvs_codec.h"
#include "ipvs/ipvs_model.h"
#include "loop/dispatcher.h"
#include "netlink/netlink_socket.h"

namespace tandem::resources::ipvs {

// The Kernel over a NETLINK_GENERIC socket (netlink::NetlinkSocket): a dumb pipe for the bytes
// that ipvs_codec.h builds and reads. Every request is asynchronous: its completion comes from
// the loop when the reply is read (the fd is readable), or as a kTimeout naming the request when
// the kernel stays silent past the deadline; a late reply is dropped. A dump reads the service
// list, then each service's destinations one request at a time, each reply in a loop callback
// of its own, so dumping 11,000 rules never holds the loop.
//
// open() resolves the IPVS family id synchronously, the one exception: the generic netlink
// controller answers inside the sender's sendmsg(), so the answer is read at once without
// waiting (a kernel that has not queued it by then is an error, not a wait). A kernel without
// IPVS is kUnavailable there, naming the module to load.
//
// It is the SyncKernel too: the sync daemons go over the same socket, in the same order as the
// table's requests.
class NetlinkKernel final : public Kernel, public SyncKernel {
 public:
  static Result<std::unique_ptr<NetlinkKernel>> open(loop::Dispatcher& dispatcher,
                                                     Millis timeout = Millis(1000));
  // Requests in flight are dropped without their completions.
  ~NetlinkKernel() override = default;
  NetlinkKernel(const NetlinkKernel&) = delete;
  NetlinkKernel& operator=(const NetlinkKernel&) = delete;

  // Services in key order, each with its destinations in key order.
  void dump(KernelDone<Table> done) override;
  void apply(const Op& op, KernelDone<void> done) override;
  void timeouts(KernelDone<Timeouts> done) override;
  void setTimeouts(const Timeouts& t, KernelDone<void> done) override;
  uint64_t writes() const override { return writes_; }
  void cork() override { socket_->cork(); }
  void uncork() override { socket_->uncork(); }

  // The sync daemons. Starting or stopping one does not count in writes(): that counts the
  // table's changes.
  void daemons(KernelDone<std::vector<SyncDaemon>> done) override;
  void startDaemon(const SyncDaemon& d, KernelDone<void> done) override;
  void stopDaemon(SyncState state, KernelDone<void> done) override;

  // Removes every service (IPVS_CMD_FLUSH): for tests only, tandem never flushes a table.
  void flush(KernelDone<void> done);
  uint16_t familyId() const { return family_id_; }
  const netlink::NetlinkSocket& socket() const { return *socket_; }

 private:
  struct DumpJob;
  using Messages = std::vector<codec::Message>;

  NetlinkKernel(std::unique_ptr<netlink::NetlinkSocket> socket, Millis timeout);

  // Sends one request and collects the replies that carry its sequence number, up to the ack
  // or the end of the dump. A failing ack is the error, mapped by codec::opError when op is
  // given, else ackError.
  void transact(std::vector<uint8_t> request, uint32_t seq, std::string what, std::optional<Op> op,
                KernelDone<Messages> done);
  netlink::NetlinkSocket::Decoder decoder(uint32_t seq, std::string what, std::optional<Op> op,
                                          std::shared_ptr<Messages> out) const;
  // A sync daemon's start or stop: the kernel's refusal of kind code (kAlreadyExists,
  // kNotFound) is explained by meaning ("a sync master daemon already runs").
  void daemonRequest(std::vector<uint8_t> request, uint32_t seq, std::string what, ErrorCode code,
                     std::string meaning, KernelDone<void> done);
  void dumpServices(std::shared_ptr<DumpJob> job);
  void dumpNextDests(std::shared_ptr<DumpJob> job);

  std::unique_ptr<netlink::NetlinkSocket> socket_;
  uint16_t family_id_ = 0;
  Millis timeout_;
  uint64_t writes_ = 0;
};

}  // namespace tandem::resources::ipvs
