#pragma once

#include <qb/qbipcs.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "common/duration.h"
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
//
// Half-open connections. libqb accepts a client, then waits for its credentials message on
// the new socket (process_auth, a watch it adds from inside the listener's callback) for as
// long as the client likes: idle connections would pile up and take tandemd's descriptors.
// So a watch added while a listener's callback runs is "authenticating": if it is still
// there after AuthLimits::timeout, or when more than AuthLimits::at_once are, the oldest
// first, its callback gets POLLHUP, on which libqb drops the watch, closes the socket and
// frees its state. A client that authenticates is never touched: libqb deletes that watch
// itself, and whatever it adds next is a connection's.
//
// Injected requests. With the socket transport a connection's requests arrive on an abstract
// datagram socket ("...-request") that libqb connects to its client only when it sends the
// first answer: until then anyone who reads the name in /proc/net/unix can send it a datagram,
// which libqb would take as the client's request (issue 13's injection race). So the watches
// added while an authenticating watch's callback runs belong to that connection: for its
// datagram socket the adapter turns on SO_PASSCRED, and before libqb reads it, drops each
// datagram at the head of the queue whose sender (SCM_CREDENTIALS, set by the kernel) is not
// the uid the client connected as (SO_PEERCRED of its setup socket). The tandem client sends one
// request and waits for its answer, so libqb reads exactly the datagram that was checked; after
// that answer the kernel refuses other senders itself. The kernel stamps a datagram with its
// sender's real uid and the setup socket with the effective one: a set-uid client, whose two
// differ, has its requests dropped (tandem is not one), never let through.
struct AuthLimits {
  Millis timeout{5000};  // a client sends its credentials at once; 5 s covers a loaded host
  size_t at_once = 32;   // authenticating at a time; a new one hangs up the oldest beyond
};

class QbPollAdapter {
 public:
  [[nodiscard]] static Result<std::unique_ptr<QbPollAdapter>> create(loop::Dispatcher& dispatcher,
                                                                     AuthLimits limits = {});
  ~QbPollAdapter();
  QbPollAdapter(const QbPollAdapter&) = delete;
  QbPollAdapter& operator=(const QbPollAdapter&) = delete;

  // For qb_ipcs_poll_handlers_set(); valid while this adapter lives.
  qb_ipcs_poll_handlers handlers() const;

  // The watches present now are listeners (the service's own sockets): call it right after
  // qb_ipcs_run. A watch added while a listener's callback runs is authenticating.
  void markListeners();

  size_t watchedFds() const { return entries_.size(); }
  size_t pendingJobs() const { return jobs_.size(); }
  size_t authenticating() const;
  uint64_t authHungUp() const { return auth_hung_up_; }  // timed out or pushed out, in all
  uint64_t foreignDropped() const { return foreign_dropped_; }
  // Called for each datagram dropped as another user's: its sender's uid and the owner's.
  void onForeign(std::function<void(uid_t from, uid_t owner)> fn) { on_foreign_ = std::move(fn); }

 private:
  enum class Kind { kOrdinary, kListener, kAuthenticating, kConnection };
  struct Entry {
    uint64_t id = 0;  // tells a re-added fd from the entry a callback started with; also age
    std::unique_ptr<loop::FdWatch> watch;
    qb_ipcs_dispatch_fn_t fn = nullptr;
    void* data = nullptr;
    Kind kind = Kind::kOrdinary;
    std::unique_ptr<loop::Timer> deadline;  // authenticating only
    std::optional<uid_t> owner;             // a connection's datagram socket: its client's uid
  };

  QbPollAdapter(loop::Dispatcher& dispatcher, AuthLimits limits)
      : dispatcher_(dispatcher), limits_(limits) {}

  void hangUp(int32_t fd, uint64_t id);  // POLLHUP to an authenticating watch's callback
  void hangUpOldestBeyondLimit();
  // Drops the datagrams at the head of fd's queue that owner did not send. False when none of
  // the owner's is left to read (libqb's callback is then not called).
  bool dropForeign(int32_t fd, uid_t owner);

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
  AuthLimits limits_;
  std::map<int32_t, Entry> entries_;
  std::map<uint64_t, std::unique_ptr<loop::Timer>> jobs_;
  uint64_t next_id_ = 1;
  Kind dispatching_ = Kind::kOrdinary;     // the kind whose callback runs now
  std::optional<uid_t> dispatching_peer_;  // an authenticating callback's client
  uint64_t auth_hung_up_ = 0;
  uint64_t foreign_dropped_ = 0;
  std::function<void(uid_t, uid_t)> on_foreign_;
};

}  // namespace tandem::ipc
