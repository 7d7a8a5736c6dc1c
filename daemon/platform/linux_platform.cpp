#include "platform/linux_platform.h"

#include <dirent.h>
#include <openssl/rand.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "cluster/udp_link.h"
#include "corosync/cmap_nodelist.h"
#include "corosync/cpg_bus.h"
#include "health/linux_checkers.h"
#include "ipc/ipc_server.h"
#include "ipvs/ipvs_netlink.h"
#include "metrics/http_server.h"
#include "ping/raw_echo_transport.h"
#include "platform/random16.h"
#include "route/netlink_route_table.h"
#include "vip/netlink_address_table.h"

namespace tandem::platform {

namespace {

class QuorumHandle final : public Handle {
 public:
  explicit QuorumHandle(std::unique_ptr<corosync::QuorumWatch> watch) : watch_(std::move(watch)) {}

 private:
  std::unique_ptr<corosync::QuorumWatch> watch_;
};

class MetricsHandle final : public Handle {
 public:
  explicit MetricsHandle(std::unique_ptr<metrics::HttpServer> server)
      : server_(std::move(server)) {}

 private:
  std::unique_ptr<metrics::HttpServer> server_;
};

// A /proc file whole; "" when it cannot be read (the series then read 0).
std::string readProc(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class IpcAdminServer final : public AdminServer {
 public:
  explicit IpcAdminServer(std::unique_ptr<ipc::IpcServer> server) : server_(std::move(server)) {}
  Result<void> setGroup(const std::string& group) override { return server_->setGroup(group); }

 private:
  std::unique_ptr<ipc::IpcServer> server_;
};

}  // namespace

Result<std::unique_ptr<LinuxPlatform>> LinuxPlatform::create(QbLogger& logger) {
  auto dispatcher = loop::QbDispatcher::create();
  if (!dispatcher) return fail(dispatcher.error());
  return std::unique_ptr<LinuxPlatform>(new LinuxPlatform(std::move(*dispatcher), logger));
}

LinuxPlatform::LinuxPlatform(std::unique_ptr<loop::QbDispatcher> dispatcher, QbLogger& logger)
    : dispatcher_(std::move(dispatcher)),
      logger_(logger),
      notifier_(logger),
      children_(std::make_unique<process::PosixChildRunner>(*dispatcher_)) {
  // Each probe in flight holds a socket; started outside systemd (which sets LimitNOFILE),
  // the soft limit is often 1024. Take what the hard limit allows.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &files);
  }
}

LinuxPlatform::~LinuxPlatform() = default;

uint64_t LinuxPlatform::wallClockMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

uint16_t LinuxPlatform::random16() {
  const Random16 r = random16From(
      [](uint8_t* out, size_t n) { return RAND_bytes(out, static_cast<int>(n)) == 1; },
      [](uint8_t* out, size_t n) {
        return ::getrandom(out, n, GRND_NONBLOCK) == static_cast<ssize_t>(n);
      },
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  if (r.source != RandomSource::kOpenSsl && !random_fallback_logged_) {
    random_fallback_logged_ = true;
    logger().log(LogLevel::kWarning,
                 std::string("the OpenSSL random generator failed (RAND_bytes); random bits now "
                             "come from ") +
                     (r.source == RandomSource::kKernel ? "the kernel (getrandom)"
                                                        : "the clock, as getrandom failed too") +
                     ", which only spread timers and tell runs apart; the keys are unaffected");
  }
  return r.value;
}

Result<std::unique_ptr<corosync::GroupBus>> LinuxPlatform::openGroupBus(
    corosync::GroupBusListener& listener, const std::string& group) {
  auto bus = corosync::CpgBus::create(*dispatcher_, listener, group);
  if (!bus) return fail(bus.error());
  return std::unique_ptr<corosync::GroupBus>(std::move(*bus));
}

Result<std::unique_ptr<Handle>> LinuxPlatform::watchQuorum(corosync::QuorumListener& listener) {
  auto q = corosync::QuorumWatch::create(*dispatcher_, listener);
  if (!q) return fail(q.error());
  return std::unique_ptr<Handle>(std::make_unique<QuorumHandle>(std::move(*q)));
}

Result<std::vector<corosync::NodelistEntry>> LinuxPlatform::readNodelist() {
  return corosync::readNodelist();
}

Result<std::unique_ptr<cluster::FrameLink>> LinuxPlatform::openFrameLink(
    uint16_t port, cluster::FrameLink::OnFrame on_frame) {
  auto link = cluster::UdpLink::open(*dispatcher_, port, std::move(on_frame));
  if (!link) return fail(link.error());
  return std::unique_ptr<cluster::FrameLink>(std::move(*link));
}

ping::MakeEchoTransport LinuxPlatform::echoTransports() {
  return [this](bool v4, bool v6, ping::OnIcmp on_icmp) {
    return ping::RawEchoTransport::open(*dispatcher_, v4, v6, std::move(on_icmp));
  };
}

Result<std::shared_ptr<resources::AddressTable>> LinuxPlatform::openAddressTable() {
  auto t = resources::NetlinkAddressTable::open(*dispatcher_);
  if (!t) return fail(t.error());
  return std::shared_ptr<resources::AddressTable>(std::move(*t));
}

Result<std::unique_ptr<resources::route::RouteTable>> LinuxPlatform::openRouteTable() {
  auto t = resources::route::NetlinkRouteTable::open(*dispatcher_);
  if (!t) return fail(t.error());
  return std::unique_ptr<resources::route::RouteTable>(std::move(*t));
}

Result<std::unique_ptr<resources::ipvs::Kernel>> LinuxPlatform::openIpvs() {
  auto k = resources::ipvs::NetlinkKernel::open(*dispatcher_);
  if (!k) return fail(k.error());
  return std::unique_ptr<resources::ipvs::Kernel>(std::move(*k));
}

Result<std::unique_ptr<resources::ipvs::SyncKernel>> LinuxPlatform::openSync() {
  auto k = resources::ipvs::NetlinkKernel::open(*dispatcher_);
  if (!k) return fail(k.error());
  return std::unique_ptr<resources::ipvs::SyncKernel>(std::move(*k));
}

Result<std::unique_ptr<resources::sync::SyncTap>> LinuxPlatform::openSyncTap(
    const resources::ipvs::SyncDaemon& backup, resources::sync::OnSyncDatagram on_datagram) {
  return resources::sync::openLinuxSyncTap(*dispatcher_, backup, std::move(on_datagram));
}

std::unique_ptr<resources::health::Checker> LinuxPlatform::makeChecker(config::CheckType type) {
  return resources::health::makeLinuxChecker(type, *dispatcher_, *children_);
}

std::unique_ptr<resources::ipvs::OwnedStore> LinuxPlatform::openIpvsOwned(
    const std::string& state_dir) {
  return std::make_unique<resources::ipvs::OwnedFile>(state_dir + "/ipvs-owned");
}

Result<std::unique_ptr<AdminServer>> LinuxPlatform::serveAdmin(ipc::AdminHandler& handler,
                                                               const AdminServerOptions& options) {
  ipc::IpcServerOptions o;
  o.name = options.name;
  o.group = options.group;
  o.audit = [this](std::string_view line) { logger_.log(LogLevel::kNotice, std::string(line)); };
  auto server = ipc::IpcServer::create(*dispatcher_, handler, users_, std::move(o));
  if (!server) return fail(server.error());
  return std::unique_ptr<AdminServer>(std::make_unique<IpcAdminServer>(std::move(*server)));
}

Result<std::unique_ptr<Handle>> LinuxPlatform::serveMetrics(const Endpoint& listen,
                                                            metrics::Scrape scrape) {
  auto server = metrics::HttpServer::listen(
      *dispatcher_, listen.address, listen.port, std::move(scrape),
      [this](LogLevel level, const std::string& line) { logger_.log(level, line); });
  if (!server) return fail(server.error());
  return std::unique_ptr<Handle>(std::make_unique<MetricsHandle>(std::move(*server)));
}

metrics::ProcessStats LinuxPlatform::processStats() {
  // procfs answers from memory: these reads do not wait on a disk.
  uint64_t fds = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') ++fds;
    }
    ::closedir(d);
    if (fds > 0) --fds;  // the descriptor opendir itself holds
  }
  static const uint64_t boot = metrics::parseBootTime(readProc("/proc/stat")).value_or(0);
  const auto stat = metrics::parseProcStat(readProc("/proc/self/stat"));
  if (!stat) return metrics::ProcessStats{0, 0, fds, 0};
  return metrics::processStats(*stat, boot, ::sysconf(_SC_CLK_TCK), ::sysconf(_SC_PAGESIZE), fds);
}

}  // namespace tandem::platform
