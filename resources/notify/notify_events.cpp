#include "notify/notify_events.h"

#include <optional>
#include <utility>

namespace tandem::resources::notify {

namespace {

using election::Role;

// What every event carries, whichever command runs.
std::vector<std::string> common(const Context& ctx, const std::string& event,
                                const std::string& hook) {
  return {"TANDEM_EVENT=" + event,
          "TANDEM_HOOK=" + hook,
          "TANDEM_NODE=" + ctx.node,
          "TANDEM_CLUSTER=" + ctx.cluster,
          "TANDEM_PRIORITY=" + std::to_string(ctx.priority),
          "TANDEM_EPOCH=" + std::to_string(ctx.epoch),
          "TANDEM_SEQUENCE=" + std::to_string(ctx.sequence)};
}

EventCommand make(const config::Command& command, const config::Notify& cfg,
                  std::vector<std::string> env, const std::string& what) {
  return EventCommand{command, cfg.timeout, std::move(env), what};
}

// The key of the role reached, if that role has one: keepalived's notify_master, _backup,
// _fault.
struct RoleKey {
  const std::optional<config::Command>* command;
  const char* key;
};
std::optional<RoleKey> ofRole(const config::Notify& cfg, Role role) {
  switch (role) {
    case Role::kActive:
      return RoleKey{&cfg.active, "active"};
    case Role::kBackup:
      return RoleKey{&cfg.backup, "backup"};
    case Role::kFault:
      return RoleKey{&cfg.fault, "fault"};
    default:
      return std::nullopt;
  }
}

}  // namespace

std::vector<EventCommand> forRoleChange(const config::Notify& cfg, const Context& ctx,
                                        const election::RoleChange& change) {
  std::vector<std::pair<const config::Command*, std::string>> run;
  if (auto own = ofRole(cfg, change.to); own && *own->command) {
    run.emplace_back(&**own->command, own->key);
  }
  if (cfg.role) run.emplace_back(&*cfg.role, "role");
  std::vector<EventCommand> out;
  for (const auto& [command, key] : run) {
    std::vector<std::string> env = common(ctx, "role", key);
    env.push_back("TANDEM_ROLE=" + std::string(election::roleName(change.to)));
    env.push_back("TANDEM_PREVIOUS_ROLE=" + std::string(election::roleName(change.from)));
    env.push_back("TANDEM_ROLE_EVENT=" + std::string(election::roleEventName(change.event)));
    env.push_back("TANDEM_REASON=" + change.reason);
    out.push_back(make(*command, cfg, std::move(env),
                       "event=role role=" + std::string(election::roleName(change.to)) +
                           " previous=" + std::string(election::roleName(change.from)) +
                           " hook=notify." + key));
  }
  return out;
}

std::vector<EventCommand> forVipChange(const config::Notify& cfg, const Context& ctx,
                                       const VipChange& change) {
  if (!cfg.vip) return {};
  const std::string state = change.added ? "added" : "removed";
  std::vector<std::string> env = common(ctx, "vip", "vip");
  env.push_back("TANDEM_ROLE=" + std::string(election::roleName(ctx.role)));
  env.push_back("TANDEM_VIP=" + change.vip.address.address.toString());
  env.push_back("TANDEM_VIP_PREFIX=" + change.vip.address.toString());
  env.push_back("TANDEM_INTERFACE=" + change.vip.interface);
  env.push_back("TANDEM_VIP_LABEL=" + change.vip.label);
  env.push_back("TANDEM_VIP_STATE=" + state);
  return {make(*cfg.vip, cfg, std::move(env),
               "event=vip vip=" + change.vip.address.toString() +
                   " interface=" + change.vip.interface + " state=" + state + " hook=notify.vip")};
}

}  // namespace tandem::resources::notify
