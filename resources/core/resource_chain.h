#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/resource.h"
#include "loop/dispatcher.h"

namespace tandem::resources {

// Runs an ordered list of resources: start in order, stop in reverse, each step under its
// resource's timeout. A failed start stops what was already started (in reverse) before it
// reports. A stop requested while a start is under way waits for the step in flight, then
// stops everything; the start is then not reported at all (it was superseded).
//
// A reload replaces the list (replace()): while the chain holds its resources, the ones that
// left are stopped (in reverse) and the ones that joined are started (in order); the ones that
// stay are not touched. Resources are shared so that one that left lives until it is stopped.
class ResourceChain {
 public:
  using List = std::vector<std::shared_ptr<Resource>>;

  ResourceChain(loop::Dispatcher& dispatcher, List resources);
  ResourceChain(loop::Dispatcher& dispatcher, std::vector<std::unique_ptr<Resource>> resources);
  ~ResourceChain();
  ResourceChain(const ResourceChain&) = delete;
  ResourceChain& operator=(const ResourceChain&) = delete;

  void startAll(Done done);
  void stopAll(Done done);
  void monitorAll(Done done);
  // Takes the new list. While idle and not holding, at once; while holding, the difference is
  // stopped and started; while busy, after the operation under way (the last replace wins).
  // done reports the first failure of a step (the others still run).
  void replace(List resources, Done done);

  bool anyPresent() const;
  // Each held resource re-announces itself (see Resource::reannounce).
  void reannounceAll();
  bool busy() const { return op_ != Op::kIdle; }
  // Started and not stopped since.
  bool holding() const { return holding_; }
  const List& resources() const { return resources_; }

 private:
  enum class Op { kIdle, kStart, kStop, kMonitor, kRollback, kReplace };
  struct Step {
    std::shared_ptr<Resource> resource;
    bool start = false;
  };

  void runStep();
  void runReplaceStep();
  void stepDone(uint64_t token, Result<void> r);
  void finish(Result<void> r);
  void beginStop(Done done);
  void beginReplace(List resources, Done done);
  void issue(Resource& r, Op op);

  loop::Dispatcher& dispatcher_;
  List resources_;
  std::unique_ptr<loop::Timer> timeout_;
  Op op_ = Op::kIdle;
  size_t index_ = 0;    // the step in flight
  uint64_t token_ = 0;  // identifies the step in flight; late answers carry an old one
  bool in_flight_ = false;
  bool holding_ = false;
  Resource* current_ = nullptr;  // the resource of the step in flight
  Done done_;
  Done queued_stop_;  // a stop that waits for the step in flight
  std::optional<Error> rollback_cause_;
  Result<void> stop_result_;
  // A replace: its steps, and one that waits for the operation under way.
  std::vector<Step> steps_;
  Result<void> replace_result_;
  std::optional<std::pair<List, Done>> pending_replace_;
};

}  // namespace tandem::resources
