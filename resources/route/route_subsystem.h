#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/log.h"
#include "core/subsystem.h"
#include "loop/dispatcher.h"
#include "route/route_policy.h"
#include "route/route_table.h"

// Route health injection: each virtual server with a [virtual_server.route] has its address
// held as a host route in the kernel while RoutePolicy says so (healthy, entitled, not held
// down); a routing daemon on the director picks the routes up by their protocol number and
// announces them. Not a start/stop resource of the takeover chain: in active/backup the routes
// follow the role as the director reports it (taken once ACTIVE, after the VIPs; given up as
// soon as the node starts releasing, before them), in active/active they follow health alone.
//
// A restarted tandemd finds the routes of its protocol in its table: those it is entitled to
// once its role is known are adopted without a write, the rest are withdrawn. A stop withdraws
// every route before tandemd exits. A timer reconciles the table with what should be there, so
// a route deleted behind tandem's back comes back and says so.
namespace tandem::resources::route {

using RouteTableFactory = std::function<Result<std::unique_ptr<RouteTable>>()>;

struct RouteDeps {
  loop::Dispatcher& dispatcher;
  RouteTableFactory open_table;  // rtnetlink, opened when the first route needs it
  LogSink log;
};

class RouteSubsystem final : public Subsystem {
 public:
  static constexpr Millis kReconcileInterval{5000};

  RouteSubsystem(RouteDeps deps, std::string self);
  ~RouteSubsystem() override;
  RouteSubsystem(const RouteSubsystem&) = delete;
  RouteSubsystem& operator=(const RouteSubsystem&) = delete;

  std::string_view name() const override { return "routes"; }
  void configure(const config::Config& next, const config::Config* running,
                 const config::ReloadDiff& diff) override;
  Result<void> start() override;
  void onRole(election::Role role) override;
  void onRoleChange(const election::RoleChange& change) override;
  nlohmann::json status() const override;
  // conf/metrics.md, "Routes": per routed service, held, error, and its counters.
  void writeMetrics(metrics::Exposition& out) const override;
  void shutdown() override;

  // A real server's health changed (the health subsystem's verdicts, as IPVS gets them).
  void setHealth(const std::string& virtual_server, const Endpoint& real_server, bool up);

 private:
  struct Service {
    std::string name;
    IpPrefix prefix;  // the service address as a /32 or /128
    int min_healthy = 1;
    std::vector<Endpoint> real_servers;
    std::set<Endpoint> down;  // real servers the checks found down
    RoutePolicy policy{Millis(0)};
    RouteDecision decision;
    bool held = false;                 // in the kernel, as far as tandem knows
    std::optional<std::string> error;  // the last add or remove that failed
    uint64_t repairs = 0;              // put back after a removal behind tandem's back
  };

  Entitlement entitlement() const;
  rtnl::RouteRequest request(const Service& s) const;
  // Decides every service again; arms the hold-down timer for the next recheck.
  void decideAll();
  // decideAll, then writes what changed.
  void evaluate();
  void apply(Service& s, bool want);
  // Removes a route a reload moved or dropped, and says so.
  void withdrawMoved(const rtnl::RouteRequest& req);
  // Reads the table and repairs it: adds what is missing, removes tandem's routes that no
  // service wants (orphans of a restart or of a reload that dropped a route).
  void reconcile();
  bool ensureTable();
  // Looks up (or, owned, creates) [route] interface: ifindex_, or interface_error_ said once.
  void resolveInterface();
  void log(LogLevel level, const std::string& line) const;

  RouteDeps deps_;
  std::string self_;
  config::Routes routes_;
  uint32_t metric_ = 0;
  uint32_t ifindex_ = 0;  // 0: blackholes, or the interface is missing (interface_error_)
  std::optional<std::string> interface_error_;
  std::vector<Service> services_;
  std::unique_ptr<RouteTable> table_;
  std::unique_ptr<loop::Timer> hold_timer_;
  std::unique_ptr<loop::Timer> reconcile_timer_;
  election::Role role_ = election::Role::kInit;
  bool releasing_ = false;  // between the start of a release and the role it reaches
  bool stopping_ = false;
  bool started_ = false;
  bool decided_ = false;  // a settled role has decided what a previous tandemd left
};

}  // namespace tandem::resources::route
