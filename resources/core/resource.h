#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/duration.h"
#include "common/result.h"

// What a director owns and moves: a VIP, the sync daemon's master role, a state file. The
// election starts them in order when a node becomes ACTIVE and stops them in reverse when it
// releases; monitor checks that what should be there still is.
namespace tandem::resources {

using Done = std::function<void(Result<void>)>;

class Resource {
 public:
  virtual ~Resource() = default;

  virtual std::string_view name() const = 0;

  // Each operation calls done exactly once, on the loop, possibly before returning. All are
  // idempotent: starting what is there adopts it, stopping what is gone succeeds.
  virtual void start(Done done) = 0;
  virtual void stop(Done done) = 0;
  // While held: repairs what drifted (and says so in the log), fails if it cannot.
  virtual void monitor(Done done) = 0;

  // Is it in place right now (e.g. the VIP on its interface)? A restarted daemon asks this to
  // learn whether it still holds what it held.
  virtual bool present() const = 0;
  // What the last start, stop, monitor or present() found, without asking again: `tandem status`
  // answers from it, so a status request never starts kernel work. Resources whose present()
  // touches no kernel need not override it.
  virtual bool lastSeenPresent() const { return present(); }

  // After a split brain was resolved in this node's favour: tell the network again that what
  // it holds lives here (the other side may have announced last). Most resources have nothing
  // to say.
  virtual void reannounce() {}

  // What `tandem status` shows of it besides its name and presence: an object of details
  // (e.g. a VIP's interface, the neighbours that answered an announcement).
  virtual nlohmann::json describe() const { return nlohmann::json::object(); }

  // How long one start, stop or monitor may take before the chain gives up on it.
  virtual Millis timeout() const { return Millis(5000); }
};

}  // namespace tandem::resources
