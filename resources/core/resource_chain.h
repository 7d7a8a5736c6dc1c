#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/resource.h"
#include "loop/dispatcher.h"

namespace tandem::resources {

// Runs an ordered list of resources: start in order, stop in reverse, each step under its
// resource's timeout. A failed start stops what was already started (in reverse) before it
// reports. A stop requested while a start is under way waits for the step in flight, then
// stops everything; the start is then not reported at all (it was superseded).
class ResourceChain {
 public:
  ResourceChain(loop::Dispatcher& dispatcher, std::vector<std::unique_ptr<Resource>> resources);
  ~ResourceChain();
  ResourceChain(const ResourceChain&) = delete;
  ResourceChain& operator=(const ResourceChain&) = delete;

  void startAll(Done done);
  void stopAll(Done done);
  void monitorAll(Done done);

  bool anyPresent() const;
  // Each held resource re-announces itself (see Resource::reannounce).
  void reannounceAll();
  bool busy() const { return op_ != Op::kIdle; }
  const std::vector<std::unique_ptr<Resource>>& resources() const { return resources_; }

 private:
  enum class Op { kIdle, kStart, kStop, kMonitor, kRollback };

  void runStep();
  void stepDone(uint64_t token, Result<void> r);
  void finish(Result<void> r);

  loop::Dispatcher& dispatcher_;
  std::vector<std::unique_ptr<Resource>> resources_;
  std::unique_ptr<loop::Timer> timeout_;
  Op op_ = Op::kIdle;
  size_t index_ = 0;    // the step in flight
  uint64_t token_ = 0;  // identifies the step in flight; late answers carry an old one
  bool in_flight_ = false;
  Done done_;
  Done queued_stop_;  // a stop that waits for the step in flight
  std::optional<Error> rollback_cause_;
  Result<void> stop_result_;
};

}  // namespace tandem::resources
