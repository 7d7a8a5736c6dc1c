#include "director/subsystem_registry.h"

#include "health/health_subsystem.h"
#include "ipvs/ipvs_subsystem.h"
#include "notify/notify_subsystem.h"
#include "route/route_subsystem.h"
#include "sync/sync_subsystem.h"
#include "vip/vip_subsystem.h"

namespace tandem::director {

namespace {

std::unique_ptr<resources::ipvs::IpvsSubsystem> makeIpvs(platform::Platform& p,
                                                         const std::string& self) {
  resources::ipvs::IpvsDeps deps{
      p.dispatcher(),
      [&p] { return p.openIpvs(); },
      [&p](const std::string& state_dir) { return p.openIpvsOwned(state_dir); },
      p.logger().sink(),
      &p.sysctlReader(),
      &p.sysctlWriter()};
  return std::make_unique<resources::ipvs::IpvsSubsystem>(std::move(deps), self);
}

// on_change: each VIP this director takes or lets go (the notify hooks).
std::unique_ptr<resources::Subsystem> makeVips(platform::Platform& p, const std::string& self,
                                               resources::OnVipChange on_change) {
  resources::VipDeps deps{
      p.dispatcher(), [&p] { return p.openAddressTable(); }, p.packetSockets(),
      // The NA's router flag follows the interface's forwarding, as the kernel's own NAs do.
      [&p](const std::string& interface) {
        auto forwarding = p.sysctlReader().read(
            resources::sysctl::sysctlKey({"net", "ipv6", "conf", interface, "forwarding"}));
        return forwarding && *forwarding == "1";
      },
      p.logger().sink(), std::move(on_change)};
  return std::make_unique<resources::VipSubsystem>(std::move(deps), self);
}

// Health on every director; what it finds goes to IPVS (weights, removal, the fallback) and to
// the routes (a service's route is held while enough of its real servers are up).
std::unique_ptr<resources::Subsystem> makeHealth(
    platform::Platform& p, const std::string& self, resources::ipvs::IpvsSubsystem* ipvs,
    resources::route::RouteSubsystem* routes, std::function<void(int)> service_health,
    std::function<void(const resources::health::HealthEvent&)> on_event) {
  resources::health::HealthDeps deps{p.dispatcher(),
                                     [&p](config::CheckType type) { return p.makeChecker(type); },
                                     [&p] { return p.random16(); },
                                     [&p] { return p.wallClockMs(); },
                                     p.logger().sink(),
                                     [ipvs, routes](const std::string& vs, const Endpoint& rs,
                                                    bool up, std::optional<int> weight) {
                                       ipvs->setHealth(vs, rs, up, weight);
                                       routes->setHealth(vs, rs, up);
                                     },
                                     std::move(service_health),
                                     &p.children(),
                                     self,
                                     std::move(on_event)};
  return std::make_unique<resources::health::HealthSubsystem>(std::move(deps));
}

// Connection sync: the backup daemon on every director, the master while ACTIVE; each pass
// tells the cluster the connection table's size for a sync-aware failback.
std::unique_ptr<resources::Subsystem> makeSync(platform::Platform& p, const std::string& self,
                                               resources::ipvs::IpvsSubsystem* ipvs,
                                               std::function<void(const SyncReport&)> sync_state) {
  resources::sync::SyncDeps deps{
      p.dispatcher(),
      [&p] { return p.openSync(); },
      p.logger().sink(),
      [&p] { return p.wallClockMs(); },
      [ipvs] { return ipvs->connections(); },
      [ipvs] { return ipvs->templates(); },
      std::move(sync_state),
      [&p](const resources::ipvs::SyncDaemon& backup, resources::sync::OnSyncDatagram on_datagram) {
        return p.openSyncTap(backup, std::move(on_datagram));
      }};
  return std::make_unique<resources::sync::SyncSubsystem>(std::move(deps), self);
}

}  // namespace

std::vector<std::unique_ptr<resources::Subsystem>> buildSubsystems(platform::Platform& platform,
                                                                   const std::string& self,
                                                                   SubsystemLinks links,
                                                                   DrainHooks* drains) {
  std::vector<std::unique_ptr<resources::Subsystem>> out;
  // IPVS first: the table is ready on every director before an election makes it ACTIVE.
  auto ipvs = makeIpvs(platform, self);
  if (drains != nullptr) {
    resources::ipvs::IpvsSubsystem* table = ipvs.get();
    drains->apply = [table](const std::vector<DrainTarget>& targets) { table->setDrains(targets); };
    drains->progress = [table](const DrainTarget& t) { return table->drainProgress(t); };
  }
  // Route health injection: each routed service's host route, for a routing daemon.
  auto routes = std::make_unique<resources::route::RouteSubsystem>(
      resources::route::RouteDeps{platform.dispatcher(),
                                  [&platform] { return platform.openRouteTable(); },
                                  platform.logger().sink()},
      self);
  auto health = makeHealth(platform, self, ipvs.get(), routes.get(),
                           std::move(links.service_health), std::move(links.health_event));
  auto sync = makeSync(platform, self, ipvs.get(), std::move(links.sync_state));
  out.push_back(std::move(ipvs));
  // The routes before health: configured first, they hear the checks' initial verdicts. They
  // are taken once ACTIVE is reached, after the VIPs, and given up when a release begins.
  out.push_back(std::move(routes));
  out.push_back(std::move(health));
  // The hooks hear each role change from the director and each VIP change from the VIPs.
  auto notify = std::make_unique<resources::notify::NotifySubsystem>(
      resources::notify::NotifyDeps{&platform.children(), platform.logger().sink()}, self);
  resources::notify::NotifySubsystem* hooks = notify.get();
  out.push_back(std::move(sync));
  out.push_back(makeVips(platform, self, [hooks](const config::Vip& vip, bool added) {
    hooks->vipChanged(vip, added);
  }));
  out.push_back(std::move(notify));
  return out;
}

}  // namespace tandem::director
