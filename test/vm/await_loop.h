#pragma once

#include <functional>
#include <optional>

#include "common/result.h"
#include "loop/dispatcher.h"

// For the VM lab's small tools (ipvs_apply, sync_ctl): one asynchronous request driven to its
// end on a real loop, as tandemd's loop drives it.
namespace tandem::vm {

// Runs the loop until the completion that start() was given is called.
template <typename T>
Result<T> await(loop::Dispatcher& d,
                const std::function<void(std::function<void(Result<T>)>)>& start) {
  std::optional<Result<T>> out;
  bool running = false;
  start([&](Result<T> r) {
    out = std::move(r);
    if (running) d.stop();
  });
  if (!out) {
    running = true;
    d.run();
  }
  if (!out) return fail(ErrorCode::kInternal, "the loop stopped before the request ended");
  return std::move(*out);
}

}  // namespace tandem::vm
