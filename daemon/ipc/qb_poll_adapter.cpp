#include "ipc/qb_poll_adapter.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace tandem::ipc {

namespace {

// The one live adapter, for libqb's context-free callbacks (see the header).
QbPollAdapter* active_adapter = nullptr;

// libqb asks for POLLIN|POLLPRI|POLLNVAL on its sockets (POLLOUT only for queued event
// notifications); the Dispatcher reports errors and hang-ups as readable, which libqb's
// callbacks then see as EOF on their next recv, the same way they handle POLLHUP.
loop::FdEvents interestOf(int32_t events) {
  return loop::FdEvents{(events & (POLLIN | POLLPRI)) != 0, (events & POLLOUT) != 0};
}

int32_t reventsOf(loop::FdEvents ready) {
  return (ready.readable ? POLLIN : 0) | (ready.writable ? POLLOUT : 0);
}

}  // namespace

Result<std::unique_ptr<QbPollAdapter>> QbPollAdapter::create(loop::Dispatcher& dispatcher,
                                                             AuthLimits limits) {
  if (active_adapter != nullptr) {
    return fail(ErrorCode::kAlreadyExists,
                "a libqb IPC adapter already exists in this process (libqb's poll handlers "
                "carry no context, so there can be only one)");
  }
  std::unique_ptr<QbPollAdapter> adapter(new QbPollAdapter(dispatcher, limits));
  active_adapter = adapter.get();
  return adapter;
}

QbPollAdapter::~QbPollAdapter() {
  entries_.clear();
  jobs_.clear();
  if (active_adapter == this) active_adapter = nullptr;
}

qb_ipcs_poll_handlers QbPollAdapter::handlers() const {
  qb_ipcs_poll_handlers h{};
  h.job_add = &QbPollAdapter::jobAdd;
  h.dispatch_add = &QbPollAdapter::dispatchAdd;
  h.dispatch_mod = &QbPollAdapter::dispatchMod;
  h.dispatch_del = &QbPollAdapter::dispatchDel;
  return h;
}

int32_t QbPollAdapter::add(int32_t fd, int32_t events, void* data, qb_ipcs_dispatch_fn_t fn) {
  if (entries_.count(fd)) return -EEXIST;
  const uint64_t id = next_id_++;
  auto watch = dispatcher_.watchFd(
      fd, interestOf(events), [this, fd, id](loop::FdEvents ready) { onReady(fd, id, ready); });
  if (!watch) {
    return watch.error().code == ErrorCode::kAlreadyExists ? -EEXIST : -EINVAL;
  }
  Entry& e = entries_[fd] =
      Entry{id, std::move(*watch), fn, data, Kind::kOrdinary, nullptr, std::nullopt};
  if (dispatching_ == Kind::kAuthenticating) {
    e.kind = Kind::kConnection;
    int type = 0;
    socklen_t len = sizeof type;
    int one = 1;
    if (dispatching_peer_ && ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
        type == SOCK_DGRAM && ::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) == 0) {
      e.owner = dispatching_peer_;
    }
  }
  if (dispatching_ == Kind::kListener) {
    e.kind = Kind::kAuthenticating;
    e.deadline = dispatcher_.createTimer([this, fd, id] {
      auto it = entries_.find(fd);
      if (it == entries_.end() || it->second.id != id) return;
      // Out of the entry first: libqb deletes the watch, and with it the entry, in hangUp.
      std::unique_ptr<loop::Timer> self = std::move(it->second.deadline);
      hangUp(fd, id);
    });
    e.deadline->arm(limits_.timeout);
    // Not from inside libqb's acceptor: the oldest goes on the next turn of the loop.
    if (authenticating() > limits_.at_once) {
      job(this, [](void* self) { static_cast<QbPollAdapter*>(self)->hangUpOldestBeyondLimit(); });
    }
  }
  return 0;
}

bool QbPollAdapter::dropForeign(int32_t fd, uid_t owner) {
  while (true) {
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    if (::recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT) < 0) {
      // Nothing queued: nothing for libqb either. An error: libqb's own recv reports it.
      return errno != EAGAIN && errno != EWOULDBLOCK;
    }
    std::optional<uid_t> sender;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        ucred cred{};
        std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
        sender = cred.uid;
      }
    }
    if (sender == owner) return true;
    (void)::recv(fd, &byte, 1, MSG_DONTWAIT);  // one datagram, whatever its length
    ++foreign_dropped_;
    if (on_foreign_) on_foreign_(sender.value_or(static_cast<uid_t>(-1)), owner);
  }
}

void QbPollAdapter::markListeners() {
  for (auto& [fd, e] : entries_) e.kind = Kind::kListener;
}

size_t QbPollAdapter::authenticating() const {
  size_t n = 0;
  for (const auto& [fd, e] : entries_) n += e.kind == Kind::kAuthenticating;
  return n;
}

void QbPollAdapter::hangUp(int32_t fd, uint64_t id) {
  auto it = entries_.find(fd);
  if (it == entries_.end() || it->second.id != id || it->second.kind != Kind::kAuthenticating) {
    return;
  }
  ++auth_hung_up_;
  qb_ipcs_dispatch_fn_t fn = it->second.fn;
  void* data = it->second.data;
  // libqb's process_auth, on POLLHUP: drops the watch (del), closes the socket, frees its data.
  int32_t rc = fn(fd, POLLHUP, data);
  auto again = entries_.find(fd);
  if (rc < 0 && again != entries_.end() && again->second.id == id) entries_.erase(again);
}

void QbPollAdapter::hangUpOldestBeyondLimit() {
  while (authenticating() > limits_.at_once) {
    const std::pair<const int32_t, Entry>* oldest = nullptr;
    for (const auto& kv : entries_) {
      if (kv.second.kind != Kind::kAuthenticating) continue;
      if (oldest == nullptr || kv.second.id < oldest->second.id) oldest = &kv;
    }
    const size_t before = authenticating();
    hangUp(oldest->first, oldest->second.id);
    if (authenticating() >= before) return;  // a callback that did not let go: no spin
  }
}

int32_t QbPollAdapter::mod(int32_t fd, int32_t events, void* data, qb_ipcs_dispatch_fn_t fn) {
  auto it = entries_.find(fd);
  if (it == entries_.end()) return -EBADF;
  it->second.fn = fn;
  it->second.data = data;
  it->second.watch->setInterest(interestOf(events));
  return 0;
}

int32_t QbPollAdapter::del(int32_t fd) {
  auto it = entries_.find(fd);
  if (it == entries_.end()) return -EBADF;
  // May run inside this fd's own callback; the Dispatcher allows destroying a watch there.
  entries_.erase(it);
  return 0;
}

int32_t QbPollAdapter::job(void* data, qb_loop_job_dispatch_fn fn) {
  const uint64_t id = next_id_++;
  auto timer = dispatcher_.createTimer([this, id, data, fn] {
    // Forget the job before running it: fn may add jobs or destroy what data points to.
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return;
    std::unique_ptr<loop::Timer> self = std::move(it->second);
    jobs_.erase(it);
    fn(data);
  });
  timer->arm(Millis(0));
  jobs_[id] = std::move(timer);
  return 0;
}

void QbPollAdapter::onReady(int32_t fd, uint64_t id, loop::FdEvents ready) {
  auto it = entries_.find(fd);
  if (it == entries_.end() || it->second.id != id) return;
  // Copies: the callback may delete this entry and add another for the same fd (libqb does
  // exactly that when a connection finishes authenticating).
  qb_ipcs_dispatch_fn_t fn = it->second.fn;
  void* data = it->second.data;
  if (it->second.owner && ready.readable && !dropForeign(fd, *it->second.owner)) return;
  const Kind outer = dispatching_;
  const std::optional<uid_t> outer_peer = dispatching_peer_;
  dispatching_ = it->second.kind;
  dispatching_peer_.reset();
  if (dispatching_ == Kind::kAuthenticating) {
    ucred peer{};
    socklen_t len = sizeof peer;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0) dispatching_peer_ = peer.uid;
  }
  int32_t rc = fn(fd, reventsOf(ready), data);
  dispatching_ = outer;
  dispatching_peer_ = outer_peer;
  if (rc < 0) {
    // qb_loop's contract: a negative return removes the fd. Only the entry this callback
    // belonged to, never one re-added under the same number meanwhile.
    auto again = entries_.find(fd);
    if (again != entries_.end() && again->second.id == id) entries_.erase(again);
  }
}

// The loop's priorities have no equivalent in the Dispatcher, which runs ready callbacks in
// turn; admin requests are rare and cheap, so nothing is lost by ignoring them.
int32_t QbPollAdapter::dispatchAdd(qb_loop_priority /*p*/, int32_t fd, int32_t events, void* data,
                                   qb_ipcs_dispatch_fn_t fn) {
  return active_adapter ? active_adapter->add(fd, events, data, fn) : -EINVAL;
}

int32_t QbPollAdapter::dispatchMod(qb_loop_priority /*p*/, int32_t fd, int32_t events, void* data,
                                   qb_ipcs_dispatch_fn_t fn) {
  return active_adapter ? active_adapter->mod(fd, events, data, fn) : -EINVAL;
}

int32_t QbPollAdapter::dispatchDel(int32_t fd) {
  return active_adapter ? active_adapter->del(fd) : -EINVAL;
}

int32_t QbPollAdapter::jobAdd(qb_loop_priority /*p*/, void* data, qb_loop_job_dispatch_fn fn) {
  return active_adapter ? active_adapter->job(data, fn) : -EINVAL;
}

}  // namespace tandem::ipc
