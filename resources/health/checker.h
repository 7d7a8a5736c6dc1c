#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common/duration.h"
#include "common/ip_address.h"
#include "config/config.h"

// One kind of health check, run against one real server at a time. A checker never blocks the
// loop: a probe is sockets and timers on the dispatcher (or a child), and its result comes back
// as a loop event. Each probe ends within the check's timeout, reading a bounded number of bytes.
namespace tandem::resources::health {

// What one probe found.
struct ProbeResult {
  ProbeResult() = default;
  ProbeResult(bool passed, std::string why, Millis elapsed = Millis(0),
              std::optional<int> asked = std::nullopt)
      : ok(passed), reason(std::move(why)), took(elapsed), weight(asked) {}
  bool ok = false;
  // Why, in an operator's words: "connected", "connection refused", "timed out after 1000 ms".
  std::string reason;
  Millis took{0};
  // The weight a healthy result asks for (an exec check with exit_weight); unset: configured.
  std::optional<int> weight;
};

// What to probe: the real server (its port resolved: the check's port, else the server's), the
// check's settings, and the virtual server it belongs to (for exec's environment).
struct ProbeTarget {
  Endpoint address;
  config::Check check;
  std::string virtual_server;
};

using ProbeDone = std::function<void(ProbeResult)>;

class Checker {
 public:
  virtual ~Checker() = default;
  // Starts a probe. done is called exactly once, from the loop (never before probe() returns),
  // unless cancel() or the checker's destruction comes first. One probe at a time.
  virtual void probe(const ProbeTarget& target, ProbeDone done) = 0;
  // Abandons the running probe, if any, without calling back.
  virtual void cancel() = 0;
};

// Makes the checker for a check type (one per real server). Null for a type not built yet.
using MakeChecker = std::function<std::unique_ptr<Checker>(config::CheckType type)>;

}  // namespace tandem::resources::health
