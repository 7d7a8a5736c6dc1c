#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "announce/announce_resource.h"
#include "announce/packet_socket.h"
#include "core/subsystem.h"
#include "loop/dispatcher.h"
#include "vip/vip_resource.h"

namespace tandem::resources {

// What the VIP subsystem needs from the platform.
struct VipDeps {
  loop::Dispatcher& dispatcher;
  AddressTableFactory open_table;         // rtnetlink, opened when the first VIP needs it
  announce::PacketSocketOpener& sockets;  // AF_PACKET
  announce::ForwardsIpv6 forwards;        // the NA's router flag
  LogSink log;                            // the VIPs' and the announcers' lines
  OnVipChange on_change;                  // each VIP taken or let go (may be unset)
};

// The VIPs this director can hold (those on an interface its [[node]] lists), each with its
// announcer: the VIPs in Stage::kVips, the announcers in Stage::kAnnounce, both in config
// order. A reload keeps the resources of a VIP that did not change (so the address is never
// touched), gives a VIP whose announcement settings changed a new announcer only, and replaces
// a VIP whose address, prefix, interface or label changed.
class VipSubsystem final : public Subsystem {
 public:
  VipSubsystem(VipDeps deps, std::string self);

  std::string_view name() const override { return "vips"; }
  Result<void> prepare(const config::Config& next, const config::Config* running) override;
  void configure(const config::Config& next, const config::Config* running,
                 const config::ReloadDiff& diff) override;
  std::vector<HeldResource> held() override;
  // Each VIP held or not (as last seen: no kernel dump), the announcements and the neighbours
  // verified.
  void writeMetrics(metrics::Exposition& out) const override;

 private:
  struct Entry {
    config::Vip vip;
    std::shared_ptr<VipResource> address;
    std::shared_ptr<announce::AnnounceResource> announcer;
  };

  // The VIPs of next that this node can hold; fails on a malformed one.
  Result<std::vector<config::Vip>> mine(const config::Config& next) const;

  VipDeps deps_;
  std::string self_;
  std::shared_ptr<AddressTable> table_;
  std::vector<Entry> entries_;
  std::vector<config::Vip> prepared_;
  // Frames of announcers a reload replaced: the counter never goes back.
  uint64_t frames_retired_ = 0;
};

}  // namespace tandem::resources
