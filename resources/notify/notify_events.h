#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/event_commands.h"
#include "election/role_machine.h"

// What the [notify] hooks run for each event, and with what environment. Pure: the config, the
// director's context and the event in, the commands out in the order they run. The environment
// is documented in conf/reference.md ([notify]); a test holds every variable to it.
namespace tandem::resources::notify {

// This director, and the state an event is told in.
struct Context {
  std::string node;
  std::string cluster;
  int priority = 0;
  election::Role role = election::Role::kInit;  // the role now (a VIP event's)
  uint64_t epoch = 0;
  uint64_t sequence = 0;  // the event's number: 1 for the first since tandemd started
};

struct VipChange {
  config::Vip vip;
  bool added = false;  // taken by this director (added, or adopted); false: let go
};

// A role change runs the command of the role reached (notify.active, notify.backup,
// notify.fault), then notify.role; none when neither is configured.
std::vector<EventCommand> forRoleChange(const config::Notify& cfg, const Context& ctx,
                                        const election::RoleChange& change);
// A VIP taken or let go runs notify.vip.
std::vector<EventCommand> forVipChange(const config::Notify& cfg, const Context& ctx,
                                       const VipChange& change);

}  // namespace tandem::resources::notify
