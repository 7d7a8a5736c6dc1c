#include "notify/notify_subsystem.h"

#include <utility>

namespace tandem::resources::notify {

namespace {
// One subject: every hook of this director waits for the one before it.
constexpr char kSubject[] = "director";
}  // namespace

NotifySubsystem::NotifySubsystem(NotifyDeps deps, std::string self)
    : self_(std::move(self)),
      commands_(deps.children, std::move(deps.log), {kMaxWaiting, "[notify]"}) {
  context_.node = self_;
}

void NotifySubsystem::configure(const config::Config& next, const config::Config* running,
                                const config::ReloadDiff& diff) {
  (void)running;
  (void)diff;
  config_ = next.notify;
  context_.cluster = next.cluster.name;
  if (const config::Node* n = next.findNode(self_)) context_.priority = n->priority;
}

void NotifySubsystem::onRoleChange(const election::RoleChange& change) {
  context_.role = change.to;
  context_.epoch = change.epoch;
  queue(forRoleChange(config_, next(), change));
}

void NotifySubsystem::vipChanged(const config::Vip& vip, bool added) {
  queue(forVipChange(config_, next(), VipChange{vip, added}));
}

Context NotifySubsystem::next() const {
  Context c = context_;
  ++c.sequence;
  return c;
}

void NotifySubsystem::queue(std::vector<EventCommand> commands) {
  // The sequence counts the events that run a hook, so that a gap means some were dropped.
  if (commands.empty()) return;
  ++context_.sequence;
  for (EventCommand& c : commands) commands_.run(kSubject, std::move(c));
}

nlohmann::json NotifySubsystem::status() const {
  if (!config_.any() && commands_.running() == 0) return nullptr;
  return {{"notify",
           {{"running", commands_.running()},
            {"waiting", commands_.waiting()},
            {"dropped", commands_.dropped()}}}};
}

void NotifySubsystem::shutdown() { commands_.clear(); }

}  // namespace tandem::resources::notify
