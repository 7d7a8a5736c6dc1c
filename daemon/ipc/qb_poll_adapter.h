#pragma once

#include <qb/qbipcs.h>

#include <cstdint>
#include <map>
#include <memory>

#include "common/result.h"
#include "loop/dispatcher.h"

namespace tandem::ipc {

// Runs libqb IPC services on a loop::Dispatcher instead of a qb_loop of their own:
// qb_ipcs_poll_handlers whose dispatch_add/mod/del are Dispatcher fd watches and whose job_add
// is a zero-delay timer. So the admin socket shares the daemon's one loop (QbDispatcher in
// production), and nothing here knows which loop that is.
//
// libqb calls these handlers as plain C functions with no context pointer of ours, so they
// find the adapter through one process-wide pointer: at most one adapter exists at a time,
// and create() refuses a second. All calls happen on the loop's thread.
class QbPollAdapter {
 public:
  [[nodiscard]] static Result<std::unique_ptr<QbPollAdapter>> create(loop::Dispatcher& dispatcher);
  ~QbPollAdapter();
  QbPollAdapter(const QbPollAdapter&) = delete;
  QbPollAdapter& operator=(const QbPollAdapter&) = delete;

  // For qb_ipcs_poll_handlers_set(); valid while this adapter lives.
  qb_ipcs_poll_handlers handlers() const;

  size_t watchedFds() const { return entries_.size(); }
  size_t pendingJobs() const { return jobs_.size(); }

 private:
  struct Entry {
    uint64_t id = 0;  // tells a re-added fd from the entry a callback started with
    std::unique_ptr<loop::FdWatch> watch;
    qb_ipcs_dispatch_fn_t fn = nullptr;
    void* data = nullptr;
  };

  explicit QbPollAdapter(loop::Dispatcher& dispatcher) : dispatcher_(dispatcher) {}

  int32_t add(int32_t fd, int32_t events, void* data, qb_ipcs_dispatch_fn_t fn);
  int32_t mod(int32_t fd, int32_t events, void* data, qb_ipcs_dispatch_fn_t fn);
  int32_t del(int32_t fd);
  int32_t job(void* data, qb_loop_job_dispatch_fn fn);
  void onReady(int32_t fd, uint64_t id, loop::FdEvents ready);

  static int32_t dispatchAdd(enum qb_loop_priority p, int32_t fd, int32_t events, void* data,
                             qb_ipcs_dispatch_fn_t fn);
  static int32_t dispatchMod(enum qb_loop_priority p, int32_t fd, int32_t events, void* data,
                             qb_ipcs_dispatch_fn_t fn);
  static int32_t dispatchDel(int32_t fd);
  static int32_t jobAdd(enum qb_loop_priority p, void* data, qb_loop_job_dispatch_fn fn);

  loop::Dispatcher& dispatcher_;
  std::map<int32_t, Entry> entries_;
  std::map<uint64_t, std::unique_ptr<loop::Timer>> jobs_;
  uint64_t next_id_ = 1;
};

}  // namespace tandem::ipc
