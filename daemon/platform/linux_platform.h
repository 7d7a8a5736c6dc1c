#pragma once

#include <memory>

#include "announce/linux_packet_socket.h"
#include "common/state_files.h"
#include "config/file_system.h"
#include "ipc/posix_user_db.h"
#include "loop/qb_dispatcher.h"
#include "platform/platform.h"
#include "platform/qb_logger.h"
#include "platform/systemd_notifier.h"
#include "process/posix_child_runner.h"
#include "sysctl/proc_sysctl.h"

namespace tandem::platform {

// The real thing: qb_loop, qb_log, sd_notify, POSIX files and children, libcpg, votequorum and
// cmap, UDP, raw ICMP, rtnetlink, AF_PACKET, IPVS generic netlink, /proc/sys and libqb IPC.
// The only place that names the Linux implementations; main.cpp builds one and hands it over.
class LinuxPlatform final : public Platform {
 public:
  // Fails when the event loop cannot be created.
  [[nodiscard]] static Result<std::unique_ptr<LinuxPlatform>> create(QbLogger& logger);
  ~LinuxPlatform() override;

  loop::Dispatcher& dispatcher() override { return *dispatcher_; }
  uint64_t wallClockMs() override;
  uint16_t random16() override;
  Logger& logger() override { return logger_; }
  Notifier& notifier() override { return notifier_; }
  const config::FileSystem& files() override { return files_; }
  StateFiles& stateFiles() override { return state_files_; }
  process::ChildRunner& children() override { return *children_; }
  Result<std::unique_ptr<corosync::GroupBus>> openGroupBus(corosync::GroupBusListener& listener,
                                                           const std::string& group) override;
  Result<std::unique_ptr<Handle>> watchQuorum(corosync::QuorumListener& listener) override;
  Result<std::vector<corosync::NodelistEntry>> readNodelist() override;
  Result<std::unique_ptr<cluster::FrameLink>> openFrameLink(
      uint16_t port, cluster::FrameLink::OnFrame on_frame) override;
  ping::MakeEchoTransport echoTransports() override;
  Result<std::shared_ptr<resources::AddressTable>> openAddressTable() override;
  Result<std::unique_ptr<resources::route::RouteTable>> openRouteTable() override;
  resources::announce::PacketSocketOpener& packetSockets() override { return packet_sockets_; }
  Result<std::unique_ptr<resources::ipvs::Kernel>> openIpvs() override;
  Result<std::unique_ptr<resources::ipvs::SyncKernel>> openSync() override;
  Result<std::unique_ptr<resources::sync::SyncTap>> openSyncTap(
      const resources::ipvs::SyncDaemon& backup,
      resources::sync::OnSyncDatagram on_datagram) override;
  std::unique_ptr<resources::ipvs::OwnedStore> openIpvsOwned(const std::string& state_dir) override;
  std::unique_ptr<resources::health::Checker> makeChecker(config::CheckType type) override;
  resources::sysctl::SysctlReader& sysctlReader() override { return sysctl_; }
  resources::sysctl::SysctlWriter& sysctlWriter() override { return sysctl_; }
  Result<std::unique_ptr<AdminServer>> serveAdmin(ipc::AdminHandler& handler,
                                                  const AdminServerOptions& options) override;
  Result<std::unique_ptr<Handle>> serveMetrics(const Endpoint& listen,
                                               metrics::Scrape scrape) override;
  metrics::ProcessStats processStats() override;

 private:
  LinuxPlatform(std::unique_ptr<loop::QbDispatcher> dispatcher, QbLogger& logger);

  std::unique_ptr<loop::QbDispatcher> dispatcher_;
  QbLogger& logger_;
  SystemdNotifier notifier_;
  config::PosixFileSystem files_;
  PosixStateFiles state_files_;
  std::unique_ptr<process::PosixChildRunner> children_;
  resources::announce::LinuxPacketSocketOpener packet_sockets_;
  resources::sysctl::ProcSysctl sysctl_;
  ipc::PosixUserDb users_;
  bool random_fallback_logged_ = false;
};

}  // namespace tandem::platform
