#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "config/config_diff.h"
#include "core/resource.h"
#include "election/role_machine.h"
#include "metrics/exposition.h"

// What a director is made of. Each part (the cluster, the VIPs with their announcements, IPVS;
// health checks, connection sync) implements Subsystem; the director builds them
// from the registry (daemon/director/subsystem_registry.cpp), configures them at start and at
// every reload, tells them each role change, and asks them for status and admin commands.
// A part that holds something only while ACTIVE hands it over as resources in its Stage; the
// takeover order is the Stage order, and nowhere else.
namespace tandem::resources {

// The takeover order: an ACTIVE takes these in order and releases them in reverse.
enum class Stage {
  kState,     // the holder file: who holds, for a restart and for scripts
  kSync,      // the IPVS connection-sync master role
  kIpvs,      // the IPVS table, kept on every director, verified before traffic arrives
  kVips,      // the virtual addresses on their interfaces
  kAnnounce,  // gratuitous ARP / unsolicited NA for each of them
};
inline constexpr Stage kStageOrder[] = {Stage::kState, Stage::kSync, Stage::kIpvs, Stage::kVips,
                                        Stage::kAnnounce};
std::string_view stageName(Stage stage);

struct HeldResource {
  Stage stage;
  std::shared_ptr<Resource> resource;
};

// The resources of every part, in takeover order (stable within a stage).
std::vector<std::shared_ptr<Resource>> inTakeoverOrder(std::vector<HeldResource> held);

// An admin command: its arguments in, the reply's fields out (see ipc/protocol.h).
using CommandHandler = std::function<Result<nlohmann::json>(const nlohmann::json& args)>;

class CommandTable {
 public:
  virtual ~CommandTable() = default;
  // One handler per name; a second registration of a name is a programming error.
  virtual void add(std::string name, CommandHandler handler) = 0;
};

class Subsystem {
 public:
  virtual ~Subsystem() = default;

  virtual std::string_view name() const = 0;

  // Before a config is applied: anything that can fail (a key file, a socket) is tried here,
  // and nothing changes. A failure refuses the start or the reload with its message.
  // running is null at start.
  [[nodiscard]] virtual Result<void> prepare(const config::Config& next,
                                             const config::Config* running) {
    (void)next;
    (void)running;
    return {};
  }
  // Applies the config: at start (running null), then at every accepted reload, with the diff
  // that says what changed. Must not fail for what prepare() accepted; what still goes wrong
  // is logged by the subsystem and retried by it.
  virtual void configure(const config::Config& next, const config::Config* running,
                         const config::ReloadDiff& diff) = 0;
  // After every subsystem is configured at start: begin work (join the group, arm timers).
  [[nodiscard]] virtual Result<void> start() { return {}; }
  // What it holds while ACTIVE; asked after each configure.
  virtual std::vector<HeldResource> held() { return {}; }
  // The role of this director changed.
  virtual void onRole(election::Role role) { (void)role; }
  // Each role change as the cluster makes it, with its cause, before the resources of that
  // change are started or stopped; onRole is told only the roles reached (a takeover whose
  // resources answered at once reaches ACTIVE without a TAKING_OVER of its own).
  virtual void onRoleChange(const election::RoleChange& change) { (void)change; }
  // Its part of `tandem status`: the fields it adds (an object), or null for none.
  virtual nlohmann::json status() const { return nullptr; }
  // Its series for a scrape of the metrics endpoint (conf/metrics.md), from what it already
  // holds: a scrape never asks the kernel, a peer or a real server anything.
  virtual void writeMetrics(metrics::Exposition& out) const { (void)out; }
  virtual void registerCommands(CommandTable& table) { (void)table; }
  // The daemon stops: give up timers and sockets. Held resources are released by then.
  virtual void shutdown() {}
};

}  // namespace tandem::resources
