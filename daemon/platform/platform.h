#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "announce/packet_socket.h"
#include "cluster/frame_link.h"
#include "common/result.h"
#include "common/state_files.h"
#include "config/file_system.h"
#include "corosync/group_bus.h"
#include "corosync/nodelist.h"
#include "corosync/quorum_watch.h"
#include "health/checker.h"
#include "ipc/admin_handler.h"
#include "ipvs/ipvs_model.h"
#include "ipvs/owned_services.h"
#include "loop/dispatcher.h"
#include "metrics/http_exchange.h"
#include "metrics/process_stats.h"
#include "ping/echo_transport.h"
#include "platform/logger.h"
#include "platform/notifier.h"
#include "process/child_runner.h"
#include "route/route_table.h"
#include "sync/sync_tap.h"
#include "sysctl/sysctl_access.h"
#include "vip/address_table.h"

// The one seam between a director and the operating system. Every OS touchpoint tandemd has is
// a factory or a service here: the loop and its steady clock, the wall clock, the journal and
// the service manager, files, children, Corosync (CPG, votequorum, cmap), UDP, raw ICMP,
// rtnetlink, AF_PACKET, IPVS generic netlink, health-check probes, /proc/sys, the admin
// channel and the metrics endpoint. main.cpp builds
// the LinuxPlatform (linux_platform.h); component tests build a fake one on simulated time
// (test/director/fake_platform.h). Nothing else in a director reaches the OS.
namespace tandem::platform {

// Something that stays open while it is held: a votequorum watch, the admin server.
class Handle {
 public:
  virtual ~Handle() = default;
};

// The admin channel's server end. Its access group may change on reload.
class AdminServer : public Handle {
 public:
  // [control] group: the unix group that may change state besides root. Fails, changing
  // nothing, when the group does not exist.
  [[nodiscard]] virtual Result<void> setGroup(const std::string& group) = 0;
};

struct AdminServerOptions {
  std::string name;   // [control] ipc_name
  std::string group;  // [control] group
};

class Platform {
 public:
  virtual ~Platform() = default;

  // The event loop, its timers and the steady clock (dispatcher().now()).
  virtual loop::Dispatcher& dispatcher() = 0;
  // Milliseconds since the Unix epoch: orders operator moves across nodes, seeds incarnations.
  virtual uint64_t wallClockMs() = 0;
  virtual uint16_t random16() = 0;

  virtual Logger& logger() = 0;
  virtual Notifier& notifier() = 0;

  // The config file and the key files it names.
  virtual const config::FileSystem& files() = 0;
  // The state directory: the role, the holder, the owned IPVS services.
  virtual StateFiles& stateFiles() = 0;
  virtual process::ChildRunner& children() = 0;

  // Corosync.
  [[nodiscard]] virtual Result<std::unique_ptr<corosync::GroupBus>> openGroupBus(
      corosync::GroupBusListener& listener, const std::string& group) = 0;
  [[nodiscard]] virtual Result<std::unique_ptr<Handle>> watchQuorum(
      corosync::QuorumListener& listener) = 0;
  [[nodiscard]] virtual Result<std::vector<corosync::NodelistEntry>> readNodelist() = 0;

  // The fast heartbeat path (UDP on [::]:port in production).
  [[nodiscard]] virtual Result<std::unique_ptr<cluster::FrameLink>> openFrameLink(
      uint16_t port, cluster::FrameLink::OnFrame on_frame) = 0;
  // Raw ICMP for the tiebreaker.
  virtual ping::MakeEchoTransport echoTransports() = 0;

  // rtnetlink: the interfaces' addresses, for the VIPs.
  [[nodiscard]] virtual Result<std::shared_ptr<resources::AddressTable>> openAddressTable() = 0;
  // rtnetlink: the routing tables, for route health injection.
  [[nodiscard]] virtual Result<std::unique_ptr<resources::route::RouteTable>> openRouteTable() = 0;
  // AF_PACKET: gratuitous ARP and unsolicited NA.
  virtual resources::announce::PacketSocketOpener& packetSockets() = 0;
  // IPVS over generic netlink; and where the owned services are kept across a restart.
  [[nodiscard]] virtual Result<std::unique_ptr<resources::ipvs::Kernel>> openIpvs() = 0;
  virtual std::unique_ptr<resources::ipvs::OwnedStore> openIpvsOwned(
      const std::string& state_dir) = 0;
  // The kernel's IPVS connection-sync daemons (generic netlink, a socket of their own).
  [[nodiscard]] virtual Result<std::unique_ptr<resources::ipvs::SyncKernel>> openSync() = 0;
  // A UDP socket beside the backup daemon, on its group: what it hears (sync_tap.h).
  [[nodiscard]] virtual Result<std::unique_ptr<resources::sync::SyncTap>> openSyncTap(
      const resources::ipvs::SyncDaemon& backup, resources::sync::OnSyncDatagram on_datagram) = 0;
  // Health checks: a checker of one type, for one real server (sockets or children on the
  // loop). Null for a type not built yet.
  virtual std::unique_ptr<resources::health::Checker> makeChecker(config::CheckType type) = 0;
  // /proc/sys.
  virtual resources::sysctl::SysctlReader& sysctlReader() = 0;
  virtual resources::sysctl::SysctlWriter& sysctlWriter() = 0;

  // The admin channel `tandem` talks to.
  [[nodiscard]] virtual Result<std::unique_ptr<AdminServer>> serveAdmin(
      ipc::AdminHandler& handler, const AdminServerOptions& options) = 0;
  // The metrics endpoint: HTTP on listen ([metrics] listen), each scrape rendered by scrape
  // once its request is complete. Fails naming the address when it cannot listen there.
  [[nodiscard]] virtual Result<std::unique_ptr<Handle>> serveMetrics(const Endpoint& listen,
                                                                     metrics::Scrape scrape) = 0;
  // This process's CPU time, memory, descriptors and start (/proc/self).
  virtual metrics::ProcessStats processStats() = 0;
};

}  // namespace tandem::platform
