// tandemd: the tandem director daemon. This file is the shell: it parses the command line,
// builds the real OS pieces (qb_loop, sd_notify, qb_log, the file system) and hands them to
// Daemon, which holds all the behaviour.
#include <openssl/rand.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "announce/announce_resource.h"
#include "announce/linux_packet_socket.h"
#include "cluster/cluster_node.h"
#include "config/config_loader.h"
#include "core/state_file_resource.h"
#include "corosync/cmap_nodelist.h"
#include "corosync/cpg_bus.h"
#include "corosync/quorum_watch.h"
#include "ipc/ipc_server.h"
#include "ipc/posix_user_db.h"
#include "ipvs/ipvs_netlink.h"
#include "ipvs/owned_services.h"
#include "loop/qb_dispatcher.h"
#include "ping/raw_echo_transport.h"
#include "process/posix_child_runner.h"
#include "sysctl/proc_sysctl.h"
#include "sysctl/sysctl_apply.h"
#include "tandemd/daemon.h"
#include "tandemd/daemonize.h"
#include "tandemd/qb_logger.h"
#include "tandemd/systemd_notifier.h"
#include "vip/netlink_address_table.h"
#include "vip/vip_resource.h"

namespace {

using namespace tandem;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // invalid config, or the daemon could not start
constexpr int kExitUsage = 2;

int checkConfig(const std::string& path) {
  config::PosixFileSystem files;
  config::LoadResult r = config::loadConfigFile(path, files);
  std::cerr << r.diagnostics.formatAll();
  if (!r.ok()) {
    int errors = r.diagnostics.errorCount();
    std::cerr << path << ": " << errors << " error" << (errors == 1 ? "" : "s") << "\n";
    return kExitFailure;
  }
  std::cout << path << ": valid (" << r.config->nodes.size() << " nodes, " << r.config->vips.size()
            << " VIPs, " << r.config->virtual_servers.size() << " virtual servers)\n";
  return kExitOk;
}

// Forwards votequorum's flag to the cluster node; lives as long as the daemon.
class QuorumForwarder final : public corosync::QuorumListener {
 public:
  explicit QuorumForwarder(tandemd::Logger& logger) : logger_(logger) {}
  void attach(cluster::ClusterNode* node) { node_ = node; }
  void onQuorum(bool quorate) override {
    if (node_) node_->onQuorum(quorate);
  }
  void onConnectionLost(const Error& cause) override {
    logger_.log(tandemd::LogLevel::kWarning, "lost votequorum: " + cause.message);
  }

 private:
  tandemd::Logger& logger_;
  cluster::ClusterNode* node_ = nullptr;
};

tandemd::LogLevel levelOf(cluster::Severity s) {
  switch (s) {
    case cluster::Severity::kError:
      return tandemd::LogLevel::kError;
    case cluster::Severity::kWarning:
      return tandemd::LogLevel::kWarning;
    case cluster::Severity::kNotice:
      return tandemd::LogLevel::kNotice;
    case cluster::Severity::kInfo:
      return tandemd::LogLevel::kInfo;
    case cluster::Severity::kDebug:
      return tandemd::LogLevel::kDebug;
  }
  return tandemd::LogLevel::kInfo;
}

uint64_t newIncarnation() {
  uint16_t random = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&random), sizeof random);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  return wire::makeIncarnation(static_cast<uint64_t>(ms), random);
}

int runDaemon(std::string path, bool foreground, const std::string& node_name) {
  // Reloads re-read the path after the daemon has left the directory it was started in.
  std::error_code ec;
  if (auto abs = std::filesystem::absolute(path, ec); !ec) path = abs.lexically_normal().string();

  tandemd::QbLogger logger(/*to_stderr=*/true);
  std::optional<tandemd::DetachedProcess> detached;
  if (!foreground) {
    auto d = tandemd::daemonize();
    if (!d) {
      logger.log(tandemd::LogLevel::kError, "cannot daemonize: " + d.error().message);
      return kExitFailure;
    }
    detached.emplace(std::move(*d));
  }
  logger.log(tandemd::LogLevel::kInfo, "tandemd " TANDEM_VERSION " starting pid=" +
                                           std::to_string(::getpid()) + " config=" + path);

  auto dispatcher = loop::QbDispatcher::create();
  if (!dispatcher) {
    logger.log(tandemd::LogLevel::kError,
               "cannot create the event loop: " + dispatcher.error().message);
    if (detached) detached->reportStarted(kExitFailure);
    return kExitFailure;
  }
  tandemd::SystemdNotifier notifier(logger);
  config::PosixFileSystem files;
  tandemd::DaemonOptions options;
  options.config_path = path;
  options.watchdog_period = tandemd::SystemdNotifier::watchdogPeriod();
  if (detached) options.main_pid = static_cast<int>(::getpid());
  resources::sysctl::ProcSysctl proc_sysctl;
  options.check_kernel_settings = [&logger, &proc_sysctl, node_name](const config::Config& cfg) {
    const config::Node* self = cfg.findNode(node_name);
    std::vector<std::string> interfaces = self ? self->interfaces : std::vector<std::string>{};
    resources::sysctl::SysctlWriter* writer = cfg.ipvs.set_sysctls ? &proc_sysctl : nullptr;
    for (const auto& line : resources::sysctl::checkSysctls(cfg, interfaces, proc_sysctl, writer)) {
      logger.log(line.level == resources::sysctl::LineLevel::kWarning ? tandemd::LogLevel::kWarning
                                                                      : tandemd::LogLevel::kNotice,
                 line.text);
    }
  };
  options.open_ipvs = []() -> Result<std::unique_ptr<resources::ipvs::Kernel>> {
    auto k = resources::ipvs::NetlinkKernel::open();
    if (!k) return fail(k.error());
    return std::unique_ptr<resources::ipvs::Kernel>(std::move(*k));
  };
  options.open_ipvs_owned = [](const std::string& state_dir) {
    return std::make_unique<resources::ipvs::OwnedFile>(state_dir + "/ipvs-owned");
  };

  process::PosixChildRunner children(**dispatcher);
  resources::announce::LinuxPacketSocketOpener packet_sockets;
  QuorumForwarder quorum_forwarder(logger);
  std::unique_ptr<corosync::QuorumWatch> quorum;
  options.make_cluster =
      [&](const config::Config& cfg) -> Result<std::unique_ptr<cluster::ClusterNode>> {
    loop::Dispatcher& d = **dispatcher;
    cluster::NodeEnv env{
        d,
        children,
        [&logger](cluster::Severity s, const std::string& line) { logger.log(levelOf(s), line); },
        [&d, group = cfg.cluster.group](
            corosync::GroupBusListener& l) -> Result<std::unique_ptr<corosync::GroupBus>> {
          auto bus = corosync::CpgBus::create(d, l, group);
          if (!bus) return fail(bus.error());
          return std::unique_ptr<corosync::GroupBus>(std::move(*bus));
        },
        {},
        newIncarnation(),
        cfg.daemon.state_dir,
        std::nullopt,
        [&d](bool v4, bool v6, ping::OnIcmp on_icmp) {
          return ping::RawEchoTransport::open(d, v4, v6, std::move(on_icmp));
        }};
    if (auto nodes = corosync::readNodelist(); nodes) {
      env.nodelist = std::move(*nodes);
    } else {
      logger.log(tandemd::LogLevel::kWarning,
                 "cannot read corosync's nodelist yet (" + nodes.error().message +
                     "); peers are reached at their node.address only");
    }
    std::vector<std::unique_ptr<resources::Resource>> res;
    res.push_back(std::make_unique<resources::StateFileResource>(cfg.daemon.state_dir + "/holder",
                                                                 node_name));
    // The VIPs this node can hold, in config order, after the state file.
    auto vips = resources::makeVipResources(
        cfg, node_name,
        []() -> Result<std::shared_ptr<resources::AddressTable>> {
          auto t = resources::NetlinkAddressTable::open();
          if (!t) return fail(t.error());
          return std::shared_ptr<resources::AddressTable>(std::move(*t));
        },
        [&logger](resources::VipLogLevel l, const std::string& line) {
          using V = resources::VipLogLevel;
          logger.log(l == V::kError     ? tandemd::LogLevel::kError
                     : l == V::kWarning ? tandemd::LogLevel::kWarning
                     : l == V::kNotice  ? tandemd::LogLevel::kNotice
                                        : tandemd::LogLevel::kInfo,
                     line);
        });
    if (!vips) return fail(vips.error());
    // Each VIP is announced (gratuitous ARP / unsolicited NA) right after it is added.
    for (auto& v : *vips) {
      config::Vip vip = static_cast<const resources::VipResource&>(*v).vip();
      res.push_back(std::move(v));
      res.push_back(resources::makeAnnounceResource(
          vip, d, packet_sockets,
          [&logger](resources::announce::Severity sev, const std::string& line) {
            using S = resources::announce::Severity;
            logger.log(sev == S::kWarning ? tandemd::LogLevel::kWarning
                       : sev == S::kInfo  ? tandemd::LogLevel::kInfo
                                          : tandemd::LogLevel::kDebug,
                       line);
          },
          // The NA's router flag follows the interface's forwarding, as the kernel's own NAs do.
          [&proc_sysctl](const std::string& interface) {
            auto forwarding = proc_sysctl.read(
                resources::sysctl::sysctlKey({"net", "ipv6", "conf", interface, "forwarding"}));
            return forwarding && *forwarding == "1";
          }));
    }
    auto node = cluster::ClusterNode::create(std::move(env), cfg, node_name, std::move(res));
    if (!node) return node;
    quorum_forwarder.attach(node->get());
    auto q = corosync::QuorumWatch::create(d, quorum_forwarder);
    if (q) quorum = std::move(*q);
    return node;
  };

  int exit_code = kExitOk;
  {
    tandemd::Daemon daemon(**dispatcher, notifier, logger, files, options);
    auto started = daemon.start();
    std::unique_ptr<ipc::IpcServer> ipc_server;
    ipc::PosixUserDb users;
    if (started) {
      ipc::IpcServerOptions ipc_options;
      ipc_options.name = daemon.config().control.ipc_name;
      ipc_options.group = daemon.config().control.group;
      ipc_options.audit = [&logger](std::string_view line) {
        logger.log(tandemd::LogLevel::kNotice, std::string(line));
      };
      auto server = ipc::IpcServer::create(**dispatcher, daemon, users, ipc_options);
      if (server) {
        ipc_server = std::move(*server);
      } else {
        logger.log(tandemd::LogLevel::kError, "cannot serve `tandem`: " + server.error().message);
        started = fail(server.error());
      }
    }
    if (!started) exit_code = kExitFailure;
    if (detached) {
      if (started) logger.stopLoggingToStderr();
      detached->reportStarted(exit_code);
    }
    if (started) (*dispatcher)->run();
  }
  logger.log(tandemd::LogLevel::kInfo,
             "tandemd exiting " + std::string("code=") + std::to_string(exit_code));
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tandemd: the tandem director daemon", "tandemd"};
  std::string config_path(tandem::config::kDefaultConfigPath);
  bool foreground = false;
  bool check_only = false;
  std::string node_name;
  app.add_option("-c,--config", config_path, "the config file")->capture_default_str();
  app.add_flag("-f,--foreground", foreground,
               "stay in the foreground and log to stderr (systemd units use this)");
  app.add_flag("--check-config", check_only,
               "load and validate the config, print its diagnostics, exit 0 if it is usable");
  app.add_option("--node", node_name,
                 "this director's [[node]] name (default: the host name, as corosync uses)")
      ->envname("TANDEM_NODE");
  app.set_version_flag("--version", "tandemd " TANDEM_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (check_only) return checkConfig(config_path);
  if (node_name.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    node_name = host;
    if (auto dot = node_name.find('.'); dot != std::string::npos) node_name.resize(dot);
  }
  return runDaemon(config_path, foreground, node_name);
}
