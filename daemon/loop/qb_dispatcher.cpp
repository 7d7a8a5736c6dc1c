#include "loop/qb_dispatcher.h"

#include <poll.h>
#include <qb/qblog.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <ctime>

namespace tandem::loop {

namespace {

int signalNumber(Signal s) {
  switch (s) {
    case Signal::kTerminate:
      return SIGTERM;
    case Signal::kHangup:
      return SIGHUP;
    case Signal::kInterrupt:
      return SIGINT;
  }
  return 0;
}

int32_t pollEvents(FdEvents interest) {
  return (interest.readable ? POLLIN : 0) | (interest.writable ? POLLOUT : 0);
}

}  // namespace

// Owned by the watch handle, or by the dispatcher while a callback runs whose watch was
// destroyed inside it: libqb still holds the pointer until the callback returns.
struct QbDispatcher::FdEntry {
  QbDispatcher* owner = nullptr;
  int fd = -1;
  FdEvents interest;
  std::function<void(FdEvents)> on_ready;
  bool in_dispatch = false;
  bool retired = false;
};

class QbDispatcher::QbTimer final : public Timer {
 public:
  QbTimer(qb_loop_t* loop, std::function<void()> on_fire)
      : loop_(loop), on_fire_(std::move(on_fire)) {}
  ~QbTimer() override { cancel(); }
  QbTimer(const QbTimer&) = delete;
  QbTimer& operator=(const QbTimer&) = delete;

  void arm(Millis delay) override {
    cancel();
    // A zero it_value disarms a timerfd instead of firing it, so "now" is one nanosecond.
    uint64_t ns = delay.count() > 0 ? static_cast<uint64_t>(delay.count()) * 1'000'000 : 1;
    int32_t rc = qb_loop_timer_add(loop_, QB_LOOP_MED, ns, this, &QbTimer::fire, &handle_);
    if (rc != 0) {
      // Only fd or memory exhaustion gets here; a daemon that cannot keep time cannot keep
      // its promises either, and systemd restarts it.
      qb_log(LOG_CRIT, "cannot arm a timer error=%d; aborting", -rc);
      std::abort();
    }
    armed_ = true;
  }

  void cancel() override {
    if (!armed_) return;
    armed_ = false;
    (void)qb_loop_timer_del(loop_, handle_);
  }

  bool armed() const override { return armed_; }

 private:
  static void fire(void* data) {
    auto* self = static_cast<QbTimer*>(data);
    self->armed_ = false;
    auto on_fire = self->on_fire_;  // the callback may destroy this timer
    on_fire();
  }

  qb_loop_t* loop_;
  std::function<void()> on_fire_;
  qb_loop_timer_handle handle_ = 0;
  bool armed_ = false;
};

class QbDispatcher::QbFdWatch final : public FdWatch {
 public:
  explicit QbFdWatch(std::unique_ptr<FdEntry> entry) : entry_(std::move(entry)) {}
  QbFdWatch(const QbFdWatch&) = delete;
  QbFdWatch& operator=(const QbFdWatch&) = delete;

  ~QbFdWatch() override {
    QbDispatcher* owner = entry_->owner;
    (void)qb_loop_poll_del(owner->loop_, entry_->fd);
    owner->watched_fds_.erase(entry_->fd);
    if (entry_->in_dispatch) {
      entry_->retired = true;
      owner->retired_fds_.push_back(std::move(entry_));
    }
  }

  void setInterest(FdEvents interest) override {
    entry_->interest = interest;
    (void)qb_loop_poll_mod(entry_->owner->loop_, QB_LOOP_MED, entry_->fd, pollEvents(interest),
                           entry_.get(), &QbDispatcher::dispatchFd);
  }

 private:
  std::unique_ptr<FdEntry> entry_;
};

class QbDispatcher::QbSignalWatch final : public SignalWatch {
 public:
  QbSignalWatch(QbDispatcher& owner, int signo) : owner_(owner), signo_(signo) {}
  ~QbSignalWatch() override { owner_.removeSignal(signo_); }
  QbSignalWatch(const QbSignalWatch&) = delete;
  QbSignalWatch& operator=(const QbSignalWatch&) = delete;

 private:
  QbDispatcher& owner_;
  int signo_;
};

Result<std::unique_ptr<QbDispatcher>> QbDispatcher::create() {
  qb_loop_t* loop = qb_loop_create();
  if (loop == nullptr) return fail(ErrorCode::kUnavailable, "qb_loop_create failed");
  std::unique_ptr<QbDispatcher> d(new QbDispatcher(loop));
  // libqb resets every unwatched signal to SIG_DFL, which for SIGPIPE means a write to a
  // closed pipe kills the daemon. Watching it with a no-op turns that into EPIPE.
  if (auto r = d->addSignal(SIGPIPE, [] {}); !r) return fail(r.error());
  return d;
}

QbDispatcher::QbDispatcher(qb_loop_t* loop) : loop_(loop) {}

QbDispatcher::~QbDispatcher() {
  while (!signals_.empty()) removeSignal(signals_.begin()->first);
  qb_loop_destroy(loop_);
}

MonoTime QbDispatcher::now() const {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return MonoTime(std::chrono::duration_cast<MonoTime::duration>(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

std::unique_ptr<Timer> QbDispatcher::createTimer(std::function<void()> on_fire) {
  return std::make_unique<QbTimer>(loop_, std::move(on_fire));
}

Result<std::unique_ptr<FdWatch>> QbDispatcher::watchFd(
    int fd, FdEvents interest, std::function<void(FdEvents ready)> on_ready) {
  if (fd < 0) return fail(ErrorCode::kInvalidArgument, "cannot watch fd " + std::to_string(fd));
  if (watched_fds_.count(fd)) {
    return fail(ErrorCode::kAlreadyExists, "fd " + std::to_string(fd) + " is already watched");
  }
  auto entry = std::make_unique<FdEntry>();
  entry->owner = this;
  entry->fd = fd;
  entry->interest = interest;
  entry->on_ready = std::move(on_ready);
  int32_t rc = qb_loop_poll_add(loop_, QB_LOOP_MED, fd, pollEvents(interest), entry.get(),
                                &QbDispatcher::dispatchFd);
  if (rc != 0) {
    // libqb keeps the slot it failed to register; deleting by fd is safe because no other
    // watch has this fd.
    (void)qb_loop_poll_del(loop_, fd);
    return fail(errnoError(-rc, "cannot watch fd " + std::to_string(fd)));
  }
  watched_fds_.insert(fd);
  return std::unique_ptr<FdWatch>(std::make_unique<QbFdWatch>(std::move(entry)));
}

int32_t QbDispatcher::dispatchFd(int32_t /*fd*/, int32_t revents, void* data) {
  auto* e = static_cast<FdEntry*>(data);
  FdEvents ready{(revents & (POLLIN | POLLPRI)) != 0, (revents & POLLOUT) != 0};
  if (revents & (POLLERR | POLLHUP | POLLNVAL)) {
    // The next read or write reports it as EOF or errno.
    if (e->interest.readable || !e->interest.writable) {
      ready.readable = true;
    } else {
      ready.writable = true;
    }
  }
  e->in_dispatch = true;
  e->on_ready(ready);
  if (e->retired) {
    // The watch was destroyed inside the callback. Returning -1 keeps libqb from reviving
    // the entry it already deleted.
    auto& retired = e->owner->retired_fds_;
    retired.erase(
        std::remove_if(retired.begin(), retired.end(), [e](const auto& p) { return p.get() == e; }),
        retired.end());
    return -1;
  }
  e->in_dispatch = false;
  return 0;
}

Result<std::unique_ptr<SignalWatch>> QbDispatcher::onSignal(Signal sig,
                                                            std::function<void()> on_signal) {
  int signo = signalNumber(sig);
  if (auto r = addSignal(signo, std::move(on_signal)); !r) return fail(r.error());
  return std::unique_ptr<SignalWatch>(std::make_unique<QbSignalWatch>(*this, signo));
}

Result<void> QbDispatcher::addSignal(int signo, std::function<void()> on_signal) {
  if (signals_.count(signo)) {
    return fail(ErrorCode::kAlreadyExists,
                "signal " + std::to_string(signo) + " already has a handler");
  }
  SignalEntry entry;
  entry.on_signal = std::move(on_signal);
  // The handle passes the dispatcher, not the entry, so a signal already queued when its
  // watch goes away finds no entry instead of a dangling one.
  int32_t rc = qb_loop_signal_add(loop_, QB_LOOP_HIGH, signo, this, &QbDispatcher::dispatchSignal,
                                  &entry.handle);
  if (rc != 0) return fail(errnoError(-rc, "cannot watch signal " + std::to_string(signo)));
  signals_.emplace(signo, std::move(entry));
  return {};
}

void QbDispatcher::removeSignal(int signo) {
  auto it = signals_.find(signo);
  if (it == signals_.end()) return;
  (void)qb_loop_signal_del(loop_, it->second.handle);
  signals_.erase(it);
  // libqb leaves its handler installed, which would swallow the signal from now on.
  ::signal(signo, SIG_DFL);
}

int32_t QbDispatcher::dispatchSignal(int32_t signo, void* data) {
  auto* self = static_cast<QbDispatcher*>(data);
  auto it = self->signals_.find(signo);
  if (it == self->signals_.end()) return 0;
  auto on_signal = it->second.on_signal;  // the callback may remove its own watch
  on_signal();
  return 0;  // non-zero would make libqb forget the registration
}

void QbDispatcher::run() { qb_loop_run(loop_); }

void QbDispatcher::stop() { qb_loop_stop(loop_); }

}  // namespace tandem::loop
