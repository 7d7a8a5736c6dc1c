#include "corosync/cpg_bus.h"

#include <corosync/cpg.h>
#include <sys/uio.h>

#include <cstring>
#include <utility>

#include "corosync/cs_error.h"
#include "corosync/handle_watch.h"

namespace tandem::corosync {

ChangeReason changeReasonFromCpg(uint32_t cpg_reason) {
  switch (cpg_reason) {
    case CPG_REASON_JOIN:
      return ChangeReason::kJoin;
    case CPG_REASON_LEAVE:
      return ChangeReason::kLeave;
    case CPG_REASON_PROCDOWN:
      return ChangeReason::kProcessDown;
    case CPG_REASON_NODEUP:
      return ChangeReason::kNodeUp;
    case CPG_REASON_NODEDOWN:
      return ChangeReason::kNodeDown;
    default:
      return ChangeReason::kUnknown;
  }
}

namespace {

std::vector<GroupMember> toMembers(const cpg_address* list, size_t count) {
  std::vector<GroupMember> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) out.push_back(GroupMember{list[i].nodeid, list[i].pid});
  return out;
}

std::vector<MemberChange> toChanges(const cpg_address* list, size_t count) {
  std::vector<MemberChange> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    out.push_back(MemberChange{GroupMember{list[i].nodeid, list[i].pid},
                               changeReasonFromCpg(list[i].reason)});
  }
  return out;
}

}  // namespace

struct CpgBus::Trampolines {
  // The context is set at initialize time, so every callback of this handle finds its bus.
  static CpgBus* self(cpg_handle_t handle) {
    void* context = nullptr;
    if (cpg_context_get(handle, &context) != CS_OK) return nullptr;
    return static_cast<CpgBus*>(context);
  }

  static void deliver(cpg_handle_t handle, const cpg_name* /*group*/, uint32_t nodeid, uint32_t pid,
                      void* msg, size_t msg_len) {
    CpgBus* bus = self(handle);
    if (bus == nullptr) return;
    bus->listener_.onMessage(nodeid, pid,
                             std::span<const uint8_t>(static_cast<const uint8_t*>(msg), msg_len));
  }

  // The handle joins exactly one group, so every confchg is about it.
  static void confchg(cpg_handle_t handle, const cpg_name* /*group*/, const cpg_address* members,
                      size_t member_count, const cpg_address* left, size_t left_count,
                      const cpg_address* joined, size_t joined_count) {
    CpgBus* bus = self(handle);
    if (bus == nullptr) return;
    GroupChange change;
    change.members = toMembers(members, member_count);
    change.joined = toChanges(joined, joined_count);
    change.left = toChanges(left, left_count);
    change.first_since_connect = std::exchange(bus->first_view_pending_, false);
    bus->listener_.onGroupChange(change);
  }

  static void totemConfchg(cpg_handle_t handle, cpg_ring_id ring_id, uint32_t count,
                           const uint32_t* nodeids) {
    CpgBus* bus = self(handle);
    if (bus == nullptr) return;
    RingMembership ring;
    ring.ring_nodeid = ring_id.nodeid;
    ring.ring_seq = ring_id.seq;
    ring.nodeids.assign(nodeids, nodeids + count);
    bus->listener_.onMembership(ring);
  }
};

Result<std::unique_ptr<CpgBus>> CpgBus::create(loop::Dispatcher& dispatcher,
                                               GroupBusListener& listener, std::string group,
                                               CpgBusOptions options) {
  if (group.empty() || group.size() >= CPG_MAX_NAME_LENGTH) {
    return fail(ErrorCode::kInvalidArgument, "CPG group name must be 1 to " +
                                                 std::to_string(CPG_MAX_NAME_LENGTH - 1) +
                                                 " bytes, got " + std::to_string(group.size()));
  }
  if (options.queue.max_messages == 0 || options.queue.max_bytes == 0) {
    return fail(ErrorCode::kInvalidArgument, "CPG send queue limits must be positive");
  }
  std::unique_ptr<CpgBus> bus(new CpgBus(dispatcher, listener, std::move(group), options));
  bus->reconnect_.attemptSoon();
  return bus;
}

CpgBus::CpgBus(loop::Dispatcher& dispatcher, GroupBusListener& listener, std::string group,
               CpgBusOptions options)
    : dispatcher_(dispatcher),
      listener_(listener),
      group_(std::move(group)),
      options_(options),
      queue_(options_.queue),
      reconnect_(dispatcher, options_.retry_initial, options_.retry_max,
                 [this] { attemptConnect(); }),
      flush_timer_(dispatcher.createTimer([this] { flush(); })),
      loss_timer_(dispatcher.createTimer([this] {
        if (!pending_loss_) return;
        Error cause = std::move(*pending_loss_);
        dropConnection(cause);
      })) {}

CpgBus::~CpgBus() { finalize(); }

void CpgBus::attemptConnect() {
  if (!reconnect_.attempt([this] { return connectOnce(); }, listener_)) return;
  connected_ = true;
  first_view_pending_ = true;
  listener_.onConnected();
}

Result<void> CpgBus::connectOnce() {
  cpg_model_v1_data_t model{};
  model.model = CPG_MODEL_V1;
  model.cpg_deliver_fn = &Trampolines::deliver;
  model.cpg_confchg_fn = &Trampolines::confchg;
  model.cpg_totem_confchg_fn = &Trampolines::totemConfchg;
  // The ring as it is now, not only its next change: the daemon needs a view from the start.
  model.flags = CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF;

  cpg_handle_t handle = 0;
  cs_error_t rc = cpg_model_initialize(&handle, CPG_MODEL_V1,
                                       reinterpret_cast<cpg_model_data_t*>(&model), this);
  if (rc != CS_OK) return fail(csError(rc, "cpg_model_initialize"));
  handle_ = handle;
  have_handle_ = true;

  int fd = -1;
  if (rc = cpg_fd_get(handle, &fd); rc != CS_OK) {
    finalize();
    return fail(csError(rc, "cpg_fd_get"));
  }
  unsigned int nodeid = 0;
  if (rc = cpg_local_get(handle, &nodeid); rc != CS_OK) {
    finalize();
    return fail(csError(rc, "cpg_local_get"));
  }
  cpg_name name{};
  name.length = static_cast<uint32_t>(group_.size());
  std::memcpy(name.value, group_.data(), group_.size());
  // CS_ERR_TRY_AGAIN while the engine synchronizes after a membership change; the backoff
  // retries it like any other failed attempt.
  if (rc = cpg_join(handle, &name); rc != CS_OK) {
    finalize();
    return fail(csError(rc, "cpg_join(" + group_ + ")"));
  }
  auto watch = watchHandle(
      dispatcher_, fd, [this] { onReadable(); }, [this] { finalize(); });
  if (!watch) return fail(watch.error());
  watch_ = std::move(*watch);
  local_nodeid_ = nodeid;
  return {};
}

void CpgBus::onReadable() {
  cs_error_t rc = cpg_dispatch(handle_, CS_DISPATCH_ALL);
  if (rc != CS_OK && rc != CS_ERR_TRY_AGAIN) {
    dropConnection(csError(rc, "cpg_dispatch(" + group_ + ")"));
    return;
  }
  // Deliveries drain corosync's queues, which is what lifts its flow control.
  if (!queue_.empty()) flush();
}

void CpgBus::drain() {
  // cpg_dispatch(CS_DISPATCH_ALL) returns once what is queued has been delivered: no wait.
  if (connected_ && !pending_loss_) onReadable();
}

Result<void> CpgBus::send(std::span<const uint8_t> bytes) {
  if (!connected_ || pending_loss_) {
    return fail(ErrorCode::kUnavailable,
                "not connected to corosync (group " + group_ + "); message not sent");
  }
  // Behind queued messages: total order starts with our own send order.
  if (!queue_.empty()) return queue_.push(bytes);

  iovec iov{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  cs_error_t rc = cpg_mcast_joined(handle_, CPG_TYPE_AGREED, &iov, 1);
  if (rc == CS_OK) return {};
  if (rc == CS_ERR_TRY_AGAIN) {
    if (auto r = queue_.push(bytes); !r) return r;
    if (!flush_timer_->armed()) flush_timer_->arm(options_.flush_retry);
    return {};
  }
  Error e = csError(rc, "cpg_mcast_joined(" + group_ + ")");
  if (csConnectionGone(rc) || rc == CS_ERR_NOT_EXIST) {
    // Gone, or no longer a member: reconnect. Not from here, though: the caller may be in
    // the middle of its own bookkeeping, and onConnectionLost would re-enter it.
    pending_loss_ = e;
    loss_timer_->arm(Millis(0));
    return fail(ErrorCode::kUnavailable, e.message);
  }
  return fail(std::move(e));
}

void CpgBus::flush() {
  while (connected_ && !queue_.empty()) {
    const std::vector<uint8_t>& front = queue_.front();
    iovec iov{const_cast<uint8_t*>(front.data()), front.size()};
    cs_error_t rc = cpg_mcast_joined(handle_, CPG_TYPE_AGREED, &iov, 1);
    if (rc == CS_OK) {
      queue_.pop();
      continue;
    }
    if (rc == CS_ERR_TRY_AGAIN) {
      if (!flush_timer_->armed()) flush_timer_->arm(options_.flush_retry);
      return;
    }
    // Skipping the message would break the order the daemon relies on, so a queued message
    // that corosync refuses for good ends this connection, and the loss reports it.
    dropConnection(csError(rc, "cpg_mcast_joined(" + group_ + ") of a queued message"));
    return;
  }
}

void CpgBus::dropConnection(const Error& cause) {
  finalize();
  size_t discarded = queue_.clear();
  reconnect_.attemptSoon();
  listener_.onConnectionLost(cause, discarded);
}

void CpgBus::finalize() {
  watch_.reset();
  flush_timer_->cancel();
  loss_timer_->cancel();
  pending_loss_.reset();
  connected_ = false;
  if (have_handle_) {
    (void)cpg_finalize(handle_);
    have_handle_ = false;
  }
}

}  // namespace tandem::corosync
