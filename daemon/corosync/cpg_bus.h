#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/duration.h"
#include "common/result.h"
#include "corosync/group_bus.h"
#include "corosync/outbound_queue.h"
#include "corosync/reconnect_timer.h"
#include "loop/dispatcher.h"

namespace tandem::corosync {

// Tuning; the defaults suit a daemon that sends a few messages a second.
struct CpgBusOptions {
  OutboundQueue::Limits queue;
  Millis retry_initial{100};  // reconnect backoff: initial delay, doubling ...
  Millis retry_max{2000};     // ... up to this
  // How soon a flow-controlled send is retried when no delivery wakes the bus first.
  Millis flush_retry{20};
};

// ChangeReason for a cpg_address.reason (CPG_REASON_*).
ChangeReason changeReasonFromCpg(uint32_t cpg_reason);

// The GroupBus on corosync's libcpg: CPG_MODEL_V1 with totem confchg, its fd on the
// dispatcher, agreed-order multicast. Survives a corosync restart: when the connection goes,
// it reports onConnectionLost, finalizes, and reconnects and rejoins with backoff from a timer.
//
// Corosync identifies a member by (nodeid, pid), so one process can join a group only once:
// a second CpgBus for the same group in the same process is refused (CS_ERR_EXIST) and keeps
// retrying.
//
// libcpg's calls are synchronous round trips over a local IPC socket: short with a healthy
// engine, but a wedged corosync can hold one. No client library of corosync avoids that.
class CpgBus final : public GroupBus {
 public:
  // Joins `group` (1 to 127 bytes). Fails only for invalid arguments; the first connection
  // attempt runs on the dispatcher, and its outcome arrives as onConnected or onConnectFailed.
  [[nodiscard]] static Result<std::unique_ptr<CpgBus>> create(loop::Dispatcher& dispatcher,
                                                              GroupBusListener& listener,
                                                              std::string group,
                                                              CpgBusOptions options = {});
  // Finalizes the connection: the others see this daemon leave while its node stays.
  ~CpgBus() override;
  CpgBus(const CpgBus&) = delete;
  CpgBus& operator=(const CpgBus&) = delete;

  Result<void> send(std::span<const uint8_t> bytes) override;
  bool connected() const override { return connected_; }
  std::optional<uint32_t> localNodeId() const override { return local_nodeid_; }
  size_t queuedMessages() const override { return queue_.size(); }
  void drain() override;

 private:
  CpgBus(loop::Dispatcher& dispatcher, GroupBusListener& listener, std::string group,
         CpgBusOptions options);

  void attemptConnect();
  [[nodiscard]] Result<void> connectOnce();
  void onReadable();
  void flush();
  // Tears the connection down, reports the loss and schedules the reconnection.
  void dropConnection(const Error& cause);
  void finalize();

  // The C callbacks libcpg calls, with the corosync types; defined in the .cpp so this header
  // stays free of them. A nested type may reach the private members.
  struct Trampolines;

  loop::Dispatcher& dispatcher_;
  GroupBusListener& listener_;
  std::string group_;
  CpgBusOptions options_;
  OutboundQueue queue_;
  ReconnectTimer reconnect_;
  std::unique_ptr<loop::Timer> flush_timer_;
  // Handles a send that found the connection gone: the loss is reported from the loop, not
  // from inside the caller's send().
  std::unique_ptr<loop::Timer> loss_timer_;
  std::unique_ptr<loop::FdWatch> watch_;
  uint64_t handle_ = 0;  // cpg_handle_t; valid while have_handle_
  bool have_handle_ = false;
  bool connected_ = false;
  bool first_view_pending_ = false;
  std::optional<uint32_t> local_nodeid_;
  std::optional<Error> pending_loss_;
};

}  // namespace tandem::corosync
