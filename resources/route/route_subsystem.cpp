#include "route/route_subsystem.h"

#include <linux/rtnetlink.h>

#include <algorithm>

namespace tandem::resources::route {

using election::Role;

namespace {
constexpr uint32_t kIpv6DefaultMetric = 1024;
}  // namespace

RouteSubsystem::RouteSubsystem(RouteDeps deps, std::string self)
    : deps_(std::move(deps)), self_(std::move(self)) {
  hold_timer_ = deps_.dispatcher.createTimer([this] { evaluate(); });
  reconcile_timer_ = deps_.dispatcher.createTimer([this] {
    reconcile();
    if (!services_.empty() && !stopping_) reconcile_timer_->arm(kReconcileInterval);
  });
}

RouteSubsystem::~RouteSubsystem() = default;

void RouteSubsystem::log(LogLevel level, const std::string& line) const {
  if (deps_.log) deps_.log(level, line);
}

namespace {

bool sameRequest(const rtnl::RouteRequest& a, const rtnl::RouteRequest& b) {
  return a.prefix == b.prefix && a.table == b.table && a.protocol == b.protocol &&
         a.metric == b.metric && a.ifindex == b.ifindex;
}

}  // namespace

void RouteSubsystem::configure(const config::Config& next, const config::Config* running,
                               const config::ReloadDiff& diff) {
  (void)running;
  (void)diff;
  // The routes held now, as they were asked for: a reload that moves one (another table,
  // protocol, metric or interface) or drops its service withdraws the old one.
  std::vector<rtnl::RouteRequest> was_held;
  for (const Service& s : services_) {
    if (s.held) was_held.push_back(request(s));
  }
  routes_ = next.routes;
  metric_ = routes_.metric;
  if (const config::Node* me = next.findNode(self_); me != nullptr && me->route_metric) {
    metric_ = *me->route_metric;
  }
  std::vector<Service> next_services;
  for (const config::VirtualServer& vs : next.virtual_servers) {
    if (!vs.route || !vs.address) continue;
    Service s;
    s.name = vs.name;
    s.prefix = IpPrefix{vs.address->address, vs.address->address.maxPrefix()};
    s.min_healthy = vs.route->min_healthy;
    for (const auto& rs : vs.real_servers) s.real_servers.push_back(rs.address);
    // A service that stays keeps its health and its hold-down.
    auto old = std::find_if(services_.begin(), services_.end(),
                            [&](const Service& o) { return o.name == s.name; });
    if (old != services_.end()) {
      s.policy = old->policy;
      s.decision = old->decision;
      s.repairs = old->repairs;
      for (const Endpoint& e : old->down) {
        if (std::find(s.real_servers.begin(), s.real_servers.end(), e) != s.real_servers.end()) {
          s.down.insert(e);
        }
      }
    }
    s.policy.setHoldDown(routes_.hold_down);
    next_services.push_back(std::move(s));
  }
  services_ = std::move(next_services);
  ifindex_ = 0;
  interface_error_.reset();
  resolveInterface();
  // A device of tandemd's own that the config no longer asks for goes, with its routes.
  if (table_ && (!routes_.own_interface || routes_.interface.empty() || services_.empty())) {
    table_->releaseOwnedInterface();
  }
  // Make before break where the kernel allows it: a route moved to another table or metric is
  // another route to the kernel, so the new one goes in (below) before the old one goes, and
  // the routing daemon never sees the address unannounced. A new interface or protocol at the
  // same table and metric is the same route to the kernel (a second add would be refused as
  // already there): the old one goes first.
  std::vector<rtnl::RouteRequest> withdraw_after;
  for (const rtnl::RouteRequest& req : was_held) {
    auto same = std::find_if(services_.begin(), services_.end(),
                             [&](const Service& s) { return sameRequest(request(s), req); });
    if (same != services_.end()) {
      same->held = true;  // unchanged: kept without a write
      continue;
    }
    auto moved = std::find_if(services_.begin(), services_.end(),
                              [&](const Service& s) { return s.prefix == req.prefix; });
    if (started_ && moved != services_.end() &&
        (request(*moved).table != req.table || request(*moved).metric != req.metric)) {
      withdraw_after.push_back(req);
      continue;
    }
    withdrawMoved(req);
  }
  if (started_) {
    evaluate();
    for (const rtnl::RouteRequest& req : withdraw_after) withdrawMoved(req);
    if (!services_.empty() && !reconcile_timer_->armed()) {
      reconcile_timer_->arm(kReconcileInterval);
    }
  }
}

void RouteSubsystem::withdrawMoved(const rtnl::RouteRequest& req) {
  if (!ensureTable()) return;
  auto r = table_->remove(req);
  log(r || r.error().code == ErrorCode::kNotFound ? LogLevel::kNotice : LogLevel::kError,
      "route withdrawn route=" + req.prefix.toString() + " table=" + std::to_string(req.table) +
          " metric=" + std::to_string(req.metric) + " reason=\"the reload moved or dropped it\"" +
          (r ? "" : " error=\"" + r.error().message + "\""));
}

void RouteSubsystem::resolveInterface() {
  if (services_.empty() || routes_.interface.empty() || !ensureTable()) return;
  // An owned interface is tandemd's own tun device: the kernel deletes it, and the routes
  // through it, when tandemd ends, even killed by -9, and the routing daemon withdraws them.
  // Deleted behind tandem's back, it is created again.
  auto index = routes_.own_interface ? table_->ownInterface(routes_.interface)
                                     : table_->interfaceIndex(routes_.interface);
  if (index) {
    if (interface_error_) {
      log(LogLevel::kNotice, "route interface usable again interface=" + routes_.interface);
    }
    ifindex_ = *index;
    interface_error_.reset();
    return;
  }
  ifindex_ = 0;
  if (interface_error_ == index.error().message) return;  // said once per cause
  interface_error_ = index.error().message;
  const std::string action =
      routes_.own_interface
          ? "delete the interface of that name or name another one in [route] interface, and "
            "reload"
          : "create it (ip link add " + routes_.interface +
                " type dummy); it is looked for again "
                "every few seconds";
  log(LogLevel::kError, "route interface unusable interface=" + routes_.interface + " error=\"" +
                            index.error().message + "\" action=\"" + action +
                            "; no route is held meanwhile\"");
}

Result<void> RouteSubsystem::start() {
  started_ = true;
  if (services_.empty()) return {};
  // What a previous tandemd left is adopted or withdrawn once the role is known (onRole); until
  // then, the reconcile timer keeps the table as the policy says. Decided (not written) now,
  // so that the status says why nothing is held yet.
  reconcile_timer_->arm(kReconcileInterval);
  decideAll();
  return {};
}

bool RouteSubsystem::ensureTable() {
  if (table_) return true;
  auto t = deps_.open_table();
  if (!t) {
    log(LogLevel::kError, "cannot open the routing table error=\"" + t.error().message + "\"");
    return false;
  }
  table_ = std::move(*t);
  return true;
}

Entitlement RouteSubsystem::entitlement() const {
  if (stopping_) return Entitlement::kStopping;
  switch (role_) {
    case Role::kInit:
      return Entitlement::kNoRoleYet;
    case Role::kStandby:
      return Entitlement::kStandby;
    case Role::kFault:
      return Entitlement::kFault;
    default:
      break;
  }
  if (routes_.mode == config::RouteMode::kActiveActive) {
    return Entitlement::kEntitled;
  }
  return role_ == Role::kActive && !releasing_ ? Entitlement::kEntitled : Entitlement::kNotActive;
}

rtnl::RouteRequest RouteSubsystem::request(const Service& s) const {
  return rtnl::RouteRequest{s.prefix, routes_.table, static_cast<uint8_t>(routes_.protocol),
                            metric_, ifindex_};
}

namespace {
// A role the node stays in, not one it passes through on the way: a restarted ACTIVE resumes
// through TAKING_OVER, and must not drop its routes there only to put them back at ACTIVE.
bool settled(Role role) {
  return role != Role::kInit && role != Role::kFencing && role != Role::kTakingOver &&
         role != Role::kReleasing;
}
}  // namespace

void RouteSubsystem::onRole(Role role) {
  role_ = role;
  releasing_ = false;
  if (!started_) return;
  // The first settled role after a start decides what a previous tandemd left: adopted if
  // entitled, withdrawn if not. Nothing is written before it.
  if (!decided_) {
    if (!settled(role)) return;
    decided_ = true;
    decideAll();
    reconcile();
    return;
  }
  evaluate();
}

void RouteSubsystem::onRoleChange(const election::RoleChange& change) {
  // A release takes the routes away first: routers stop sending here before the VIPs go.
  if (change.to == Role::kReleasing) {
    releasing_ = true;
    evaluate();
  }
}

void RouteSubsystem::setHealth(const std::string& virtual_server, const Endpoint& real_server,
                               bool up) {
  for (Service& s : services_) {
    if (s.name != virtual_server) continue;
    if (up) {
      s.down.erase(real_server);
    } else {
      s.down.insert(real_server);
    }
  }
  if (started_) evaluate();
}

void RouteSubsystem::decideAll() {
  const Time now = deps_.dispatcher.now();
  const Entitlement ent = entitlement();
  std::optional<Time> next_check;
  for (Service& s : services_) {
    ServiceHealth h;
    h.total = s.real_servers.size();
    h.up = h.total - std::min(h.total, s.down.size());
    h.min_healthy = static_cast<size_t>(s.min_healthy);
    RouteDecision d = s.policy.decide(now, ent, h);
    if (d.recheck && (!next_check || *d.recheck < *next_check)) next_check = d.recheck;
    // Without the interface it names, a route would be a blackhole: none is held then.
    if (d.hold && (interface_error_ || (!routes_.interface.empty() && ifindex_ == 0))) {
      d.hold = false;
      d.reason = "no route can be held: " +
                 interface_error_.value_or("interface " + routes_.interface + " not found yet");
    }
    if (d.hold != s.decision.hold || d.reason != s.decision.reason) {
      log(LogLevel::kInfo, "route decision service=" + s.name + " route=" + s.prefix.toString() +
                               " hold=" + (d.hold ? "yes" : "no") + " reason=\"" + d.reason + "\"");
    }
    s.decision = d;
  }
  if (next_check) {
    auto wait = std::chrono::duration_cast<Millis>(*next_check - now);
    hold_timer_->arm(std::max(wait, Millis(1)));
  } else {
    hold_timer_->cancel();
  }
}

void RouteSubsystem::evaluate() {
  decideAll();
  if (!decided_ && !stopping_) return;  // what a previous tandemd left waits for a settled role
  for (Service& s : services_) apply(s, s.decision.hold);
}

void RouteSubsystem::apply(Service& s, bool want) {
  if (want == s.held) return;
  if (!ensureTable()) return;
  const rtnl::RouteRequest req = request(s);
  Result<void> r = want ? table_->add(req) : table_->remove(req);
  // Already there (adopted) or already gone: the kernel agrees with the decision.
  const bool agreed = !r && (want ? r.error().code == ErrorCode::kAlreadyExists
                                  : r.error().code == ErrorCode::kNotFound);
  if (r || agreed) {
    s.held = want;
    s.error.reset();
    const char* what = want ? (r ? "route injected" : "route adopted (already in place)")
                            : (r ? "route withdrawn" : "route withdrawn (already gone)");
    log(LogLevel::kNotice, std::string(what) + " service=" + s.name + " route=" +
                               s.prefix.toString() + " table=" + std::to_string(routes_.table) +
                               " protocol=" + std::to_string(routes_.protocol) + " reason=\"" +
                               s.decision.reason + "\"");
    return;
  }
  // Said once per cause: the reconcile retries every few seconds.
  if (s.error != r.error().message) {
    log(LogLevel::kError, "route change failed service=" + s.name + " error=\"" +
                              r.error().message + "\" action=\"retried every " +
                              std::to_string(kReconcileInterval.count() / 1000) + " s\"");
  }
  s.error = r.error().message;
}

void RouteSubsystem::reconcile() {
  // Before the first role nothing is decided: what is in place stays until then.
  if (services_.empty() || !decided_ || stopping_ || !ensureTable()) return;
  // The interface may have come, gone, or come back with another index.
  const bool could_hold = !interface_error_;
  const uint32_t was_index = ifindex_;
  resolveInterface();
  if (could_hold != !interface_error_ || was_index != ifindex_) decideAll();
  auto present = table_->routes(routes_.table, static_cast<uint8_t>(routes_.protocol));
  if (!present) {
    log(LogLevel::kError,
        "cannot read the routing table error=\"" + present.error().message + "\"");
    return;
  }
  // What should be there, by prefix.
  for (Service& s : services_) {
    const bool want = s.decision.hold;
    // The kernel gives an IPv6 route without a metric its default, 1024.
    const uint32_t metric =
        metric_ == 0 && s.prefix.address.family == Family::kInet6 ? kIpv6DefaultMetric : metric_;
    // A blackhole is known by its type: the kernel puts an IPv6 one on lo (index 1), not 0.
    auto it = std::find_if(present->begin(), present->end(), [&](const rtnl::RouteEntry& e) {
      return e.prefix == s.prefix && e.metric == metric &&
             (ifindex_ == 0 ? e.type == RTN_BLACKHOLE : e.ifindex == ifindex_);
    });
    const bool there = it != present->end();
    if (want && !there && s.held) {
      ++s.repairs;
      log(LogLevel::kWarning, "route missing, put back service=" + s.name + " route=" +
                                  s.prefix.toString() + " cause=\"removed behind tandem's back\"");
      s.held = false;
    }
    if (want && there && !s.held) {
      log(LogLevel::kNotice, "route adopted service=" + s.name + " route=" + s.prefix.toString() +
                                 " cause=\"found in place (an earlier tandemd's)\"");
    }
    if (there) s.held = true;  // in place: adopted if wanted, withdrawn below if not
    apply(s, want);
    if (there) present->erase(it);
  }
  // tandem's protocol in tandem's table, but no service's current route: an orphan. Only host
  // routes, the only kind tandem makes: a shorter prefix is no orphan of tandem's, whatever its
  // protocol number says.
  for (const rtnl::RouteEntry& e : *present) {
    if (e.prefix.length != e.prefix.address.maxPrefix()) continue;
    rtnl::RouteRequest req{e.prefix, routes_.table, static_cast<uint8_t>(routes_.protocol),
                           e.metric, e.ifindex};
    auto r = table_->remove(req);
    log(r || r.error().code == ErrorCode::kNotFound ? LogLevel::kNotice : LogLevel::kError,
        "route orphan withdrawn route=" + e.prefix.toString() + " table=" +
            std::to_string(routes_.table) + (r ? "" : " error=\"" + r.error().message + "\""));
  }
}

void RouteSubsystem::shutdown() {
  stopping_ = true;
  hold_timer_->cancel();
  reconcile_timer_->cancel();
  for (Service& s : services_) {
    s.decision.hold = false;
    s.decision.reason = "tandemd stops";
    apply(s, false);
  }
}

void RouteSubsystem::writeMetrics(metrics::Exposition& out) const {
  using metrics::Type;
  if (services_.empty()) return;
  std::vector<std::string> labels;
  for (const Service& s : services_) {
    labels.push_back(metrics::labelSet({{"vs", s.name}, {"route", s.prefix.toString()}}));
  }
  out.family("tandem_route_held", Type::kGauge,
             "1 while this director holds the service's host route in the kernel");
  for (size_t i = 0; i < services_.size(); ++i) {
    out.sample(labels[i], services_[i].held ? 1.0 : 0.0);
  }
  // An unusable route interface keeps every route out, whatever each service's health says.
  out.family("tandem_route_error", Type::kGauge,
             "1 while the route cannot be written as decided (its last change failed, or the "
             "route interface is unusable)");
  for (size_t i = 0; i < services_.size(); ++i) {
    out.sample(labels[i], interface_error_ || services_[i].error ? 1.0 : 0.0);
  }
  const struct {
    const char* name;
    const char* help;
    uint64_t (*value)(const Service&);
  } counters[] = {
      {"tandem_route_withdrawals", "Withdrawals of the route because the service was unhealthy",
       [](const Service& s) { return s.policy.withdrawals(); }},
      {"tandem_route_absorbed_flaps",
       "Failures of the service absorbed by the hold-down, no withdrawal each",
       [](const Service& s) { return s.policy.absorbedFlaps(); }},
      {"tandem_route_repairs", "Times the route was put back after a removal behind tandem's back",
       [](const Service& s) { return s.repairs; }},
  };
  for (const auto& c : counters) {
    out.family(c.name, Type::kCounter, c.help);
    for (size_t i = 0; i < services_.size(); ++i) out.sample(labels[i], c.value(services_[i]));
  }
}

nlohmann::json RouteSubsystem::status() const {
  if (services_.empty()) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  out["mode"] =
      routes_.mode == config::RouteMode::kActiveActive ? "active-active" : "active-backup";
  out["table"] = routes_.table;
  out["protocol"] = routes_.protocol;
  out["interface"] =
      routes_.interface.empty() ? nlohmann::json(nullptr) : nlohmann::json(routes_.interface);
  out["own_interface"] = routes_.own_interface;
  out["metric"] = metric_;
  if (interface_error_) out["error"] = *interface_error_;
  nlohmann::json list = nlohmann::json::array();
  for (const Service& s : services_) {
    nlohmann::json j{{"service", s.name},
                     {"route", s.prefix.toString()},
                     {"held", s.held},
                     {"reason", s.decision.reason},
                     {"withdrawals", s.policy.withdrawals()},
                     {"repairs", s.repairs},
                     {"absorbed_flaps", s.policy.absorbedFlaps()}};
    if (s.error) j["error"] = *s.error;
    list.push_back(std::move(j));
  }
  out["services"] = std::move(list);
  return nlohmann::json{{"routes", std::move(out)}};
}

}  // namespace tandem::resources::route
