#include "corosync/quorum_watch.h"

#include <corosync/votequorum.h>

#include "corosync/cs_error.h"
#include "corosync/handle_watch.h"

namespace tandem::corosync {

struct QuorumWatch::Trampolines {
  static void quorumNotify(votequorum_handle_t handle, uint64_t /*context*/, uint32_t quorate,
                           uint32_t /*node_count*/, votequorum_node_t /*nodes*/[]) {
    void* context = nullptr;
    if (votequorum_context_get(handle, &context) != CS_OK || context == nullptr) return;
    static_cast<QuorumWatch*>(context)->report(quorate != 0);
  }
};

Result<std::unique_ptr<QuorumWatch>> QuorumWatch::create(loop::Dispatcher& dispatcher,
                                                         QuorumListener& listener,
                                                         QuorumWatchOptions options) {
  std::unique_ptr<QuorumWatch> watch(new QuorumWatch(dispatcher, listener, options));
  watch->reconnect_.attemptSoon();
  return watch;
}

QuorumWatch::QuorumWatch(loop::Dispatcher& dispatcher, QuorumListener& listener,
                         QuorumWatchOptions options)
    : dispatcher_(dispatcher),
      listener_(listener),
      reconnect_(dispatcher, options.retry_initial, options.retry_max,
                 [this] { attemptConnect(); }) {}

QuorumWatch::~QuorumWatch() { finalize(); }

void QuorumWatch::attemptConnect() {
  if (!reconnect_.attempt([this] { return connectOnce(); }, listener_)) return;
  connected_ = true;
  listener_.onConnected();
}

Result<void> QuorumWatch::connectOnce() {
  votequorum_callbacks_t callbacks{};
  callbacks.votequorum_quorum_notify_fn = &Trampolines::quorumNotify;
  votequorum_handle_t handle = 0;
  cs_error_t rc = votequorum_initialize(&handle, &callbacks);
  if (rc != CS_OK) return fail(csError(rc, "votequorum_initialize"));
  handle_ = handle;
  have_handle_ = true;

  if (rc = votequorum_context_set(handle, this); rc != CS_OK) {
    finalize();
    return fail(csError(rc, "votequorum_context_set"));
  }
  int fd = -1;
  if (rc = votequorum_fd_get(handle, &fd); rc != CS_OK) {
    finalize();
    return fail(csError(rc, "votequorum_fd_get"));
  }
  if (rc = votequorum_trackstart(handle, 0, CS_TRACK_CURRENT | CS_TRACK_CHANGES); rc != CS_OK) {
    finalize();
    return fail(csError(rc, "votequorum_trackstart"));
  }
  auto watch = watchHandle(
      dispatcher_, fd, [this] { onReadable(); }, [this] { finalize(); });
  if (!watch) return fail(watch.error());
  watch_ = std::move(*watch);
  return {};
}

void QuorumWatch::onReadable() {
  cs_error_t rc = votequorum_dispatch(handle_, CS_DISPATCH_ALL);
  if (rc != CS_OK && rc != CS_ERR_TRY_AGAIN) dropConnection(csError(rc, "votequorum_dispatch"));
}

void QuorumWatch::report(bool quorate) {
  if (quorate_ == quorate) return;
  quorate_ = quorate;
  listener_.onQuorum(quorate);
}

void QuorumWatch::dropConnection(const Error& cause) {
  finalize();
  reconnect_.attemptSoon();
  listener_.onConnectionLost(cause);
}

void QuorumWatch::finalize() {
  watch_.reset();
  connected_ = false;
  quorate_.reset();
  if (have_handle_) {
    (void)votequorum_finalize(handle_);
    have_handle_ = false;
  }
}

}  // namespace tandem::corosync
