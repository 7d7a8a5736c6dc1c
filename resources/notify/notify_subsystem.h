#pragma once

#include <cstdint>
#include <string>

#include "common/log.h"
#include "core/event_commands.h"
#include "core/subsystem.h"
#include "notify/notify_events.h"
#include "process/child_runner.h"

// The [notify] hooks: a command per role change and per VIP change of this director, run as a
// child (never waited for on the loop, killed with its process group at notify.timeout), one at
// a time in the order of the events. A takeover runs TAKING_OVER's hooks, then each VIP added in
// takeover order, then ACTIVE's; a release RELEASING's, each VIP removed in reverse, then the
// role it lands in. The queue holds kMaxWaiting commands behind the one running; past that the
// oldest waiting is dropped and logged, so a hook that always hangs costs a bounded amount of
// memory and never delays the director. A hook's failure is logged, never acted on.
namespace tandem::resources::notify {

struct NotifyDeps {
  process::ChildRunner* children;
  LogSink log;
};

class NotifySubsystem final : public Subsystem {
 public:
  static constexpr size_t kMaxWaiting = 64;

  NotifySubsystem(NotifyDeps deps, std::string self);

  std::string_view name() const override { return "notify"; }
  // At start and at every reload: the events from now on run the new commands and timeout;
  // those already waiting run as they were queued.
  void configure(const config::Config& next, const config::Config* running,
                 const config::ReloadDiff& diff) override;
  void onRoleChange(const election::RoleChange& change) override;
  // {"notify": {"running", "waiting", "dropped"}} while any hook is configured or runs.
  nlohmann::json status() const override;
  void shutdown() override;

  // A VIP's resource took it (added or adopted) or let it go (VipDeps::on_change).
  void vipChanged(const config::Vip& vip, bool added);

 private:
  // The context of the next event that runs a hook.
  Context next() const;
  void queue(std::vector<EventCommand> commands);

  std::string self_;
  config::Notify config_;
  Context context_;
  EventCommands commands_;
};

}  // namespace tandem::resources::notify
