#pragma once

#include <functional>
#include <memory>

#include "common/result.h"
#include "loop/dispatcher.h"

namespace tandem::corosync {

// A corosync handle's fd (cpg_fd_get, votequorum_fd_get), watched for reading on the loop. A
// handle nobody watches is of no use: when the watch cannot be set up, finalize runs before the
// error is returned.
[[nodiscard]] inline Result<std::unique_ptr<loop::FdWatch>> watchHandle(
    loop::Dispatcher& dispatcher, int fd, std::function<void()> on_readable,
    const std::function<void()>& finalize) {
  auto watch =
      dispatcher.watchFd(fd, loop::FdEvents{true, false},
                         [on_readable = std::move(on_readable)](loop::FdEvents) { on_readable(); });
  if (!watch) finalize();
  return watch;
}

}  // namespace tandem::corosync
