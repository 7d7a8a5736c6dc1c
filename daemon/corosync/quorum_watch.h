#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "common/duration.h"
#include "common/error.h"
#include "common/result.h"
#include "corosync/reconnect_timer.h"
#include "loop/dispatcher.h"

namespace tandem::corosync {

// Callbacks arrive on the dispatcher; they must not destroy the watch.
class QuorumListener {
 public:
  virtual ~QuorumListener() = default;
  // The first state after each (re)connection, then every change; repeats are folded.
  virtual void onQuorum(bool quorate) = 0;
  virtual void onConnected() {}
  // Quorum is unknown until the watch reconnects; it does so by itself.
  virtual void onConnectionLost(const Error& cause) = 0;
  virtual void onConnectFailed(const Error& /*cause*/, Millis /*retry_in*/) {}
};

struct QuorumWatchOptions {
  Millis retry_initial{100};
  Millis retry_max{2000};
};

// The local node's quorate flag from corosync's votequorum service, tracked (CS_TRACK_CURRENT
// for the state now, CS_TRACK_CHANGES after), its fd on the dispatcher, reconnecting with
// backoff like CpgBus. Needs `quorum { provider: corosync_votequorum }`; with another provider
// the connection is refused and retried.
class QuorumWatch {
 public:
  // The first connection attempt runs on the dispatcher.
  [[nodiscard]] static Result<std::unique_ptr<QuorumWatch>> create(loop::Dispatcher& dispatcher,
                                                                   QuorumListener& listener,
                                                                   QuorumWatchOptions options = {});
  ~QuorumWatch();
  QuorumWatch(const QuorumWatch&) = delete;
  QuorumWatch& operator=(const QuorumWatch&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }
  // nullopt while disconnected or before the first report: unknown is not "quorate".
  [[nodiscard]] std::optional<bool> quorate() const { return quorate_; }

 private:
  QuorumWatch(loop::Dispatcher& dispatcher, QuorumListener& listener, QuorumWatchOptions options);

  void attemptConnect();
  [[nodiscard]] Result<void> connectOnce();
  void onReadable();
  void dropConnection(const Error& cause);
  void finalize();
  void report(bool quorate);

  struct Trampolines;

  loop::Dispatcher& dispatcher_;
  QuorumListener& listener_;
  ReconnectTimer reconnect_;
  std::unique_ptr<loop::FdWatch> watch_;
  uint64_t handle_ = 0;  // votequorum_handle_t; valid while have_handle_
  bool have_handle_ = false;
  bool connected_ = false;
  std::optional<bool> quorate_;
};

}  // namespace tandem::corosync
