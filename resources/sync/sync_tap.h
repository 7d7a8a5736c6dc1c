#pragma once

#include <functional>
#include <memory>
#include <span>

#include "common/ip_address.h"
#include "common/result.h"
#include "ipvs/ipvs_model.h"
#include "loop/dispatcher.h"

// What the kernel's backup daemon receives, seen by tandem too. The kernel binds its receive
// socket to the sync group and port with the equivalent of SO_REUSEADDR, and a multicast
// datagram goes to every socket bound there: a second socket, bound the same way, hears each
// sync message and takes nothing from the backup. That is how the status can say when the
// backup last heard a master, and warn of messages it drops for another sync id.
namespace tandem::resources::sync {

// Open while the tap listens; destroying it closes the socket.
class SyncTap {
 public:
  virtual ~SyncTap() = default;
};

using OnSyncDatagram =
    std::function<void(std::span<const uint8_t> datagram, const IpAddress& from)>;
// Listens where this backup daemon listens (its interface, group and port; the kernel's
// defaults where they are unset). Datagrams are reported from the loop.
using OpenSyncTap = std::function<Result<std::unique_ptr<SyncTap>>(const ipvs::SyncDaemon& backup,
                                                                   OnSyncDatagram on_datagram)>;

// The group and port the kernel uses for a daemon: 224.0.0.81 and 8848 where unset.
IpAddress syncGroupOf(const ipvs::SyncDaemon& d);
uint16_t syncPortOf(const ipvs::SyncDaemon& d);

// A UDP socket on the dispatcher (Linux).
Result<std::unique_ptr<SyncTap>> openLinuxSyncTap(loop::Dispatcher& dispatcher,
                                                  const ipvs::SyncDaemon& backup,
                                                  OnSyncDatagram on_datagram);

}  // namespace tandem::resources::sync
