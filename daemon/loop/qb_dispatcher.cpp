#include "loop/qb_dispatcher.h"

#include <poll.h>
#include <qb/qblog.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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

uint32_t epollEvents(FdEvents interest) {
  return (interest.readable ? EPOLLIN : 0u) | (interest.writable ? EPOLLOUT : 0u);
}

uint64_t epollKey(int fd, uint32_t generation) {
  return (static_cast<uint64_t>(generation) << 32) | static_cast<uint32_t>(fd);
}

timespec toTimespec(MonoTime t) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  // An all-zero it_value disarms a timerfd instead of firing it.
  if (ns <= 0) ns = 1;
  return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

[[noreturn]] void fatal(const char* what, int err) {
  // Only fd or memory exhaustion gets here; a daemon that cannot keep time or watch its sockets
  // cannot keep its promises either, and systemd restarts it.
  qb_log(LOG_CRIT, "%s error=%d; aborting", what, err);
  std::abort();
}

}  // namespace

// Owned by the watch handle, or by the dispatcher once the watch was destroyed during a batch
// of events: the entry may still be running its callback.
struct QbDispatcher::FdEntry {
  QbDispatcher* owner = nullptr;  // null once the dispatcher is gone
  int fd = -1;
  uint32_t generation = 0;
  FdEvents interest;
  std::function<void(FdEvents)> on_ready;
};

class QbDispatcher::QbTimer final : public Timer {
 public:
  QbTimer(QbDispatcher* owner, std::function<void()> on_fire)
      : owner_(owner), on_fire_(std::move(on_fire)) {}
  ~QbTimer() override { cancel(); }
  QbTimer(const QbTimer&) = delete;
  QbTimer& operator=(const QbTimer&) = delete;

  void arm(Millis delay) override {
    cancel();
    MonoTime deadline = owner_->now() + std::max(delay, Millis(0));
    pos_ = owner_->addDeadline(deadline, this);
    armed_ = true;
  }

  // Leaves the timerfd as it is: an early wakeup finds nothing due and re-arms it.
  void cancel() override {
    if (!armed_) return;
    armed_ = false;
    owner_->timers_.erase(pos_);
  }

  bool armed() const override { return armed_; }

 private:
  friend class QbDispatcher;

  // Called once the dispatcher took it off the queue.
  void fire() {
    armed_ = false;
    auto on_fire = on_fire_;  // the callback may destroy this timer
    on_fire();
  }

  QbDispatcher* owner_;
  std::function<void()> on_fire_;
  TimerQueue::iterator pos_;
  bool armed_ = false;
};

class QbDispatcher::QbFdWatch final : public FdWatch {
 public:
  explicit QbFdWatch(std::unique_ptr<FdEntry> entry) : entry_(std::move(entry)) {}
  QbFdWatch(const QbFdWatch&) = delete;
  QbFdWatch& operator=(const QbFdWatch&) = delete;

  ~QbFdWatch() override {
    QbDispatcher* owner = entry_->owner;
    if (owner == nullptr) return;
    owner->releaseFd(*entry_);
    if (owner->in_fd_batch_) owner->retired_fds_.push_back(std::move(entry_));
  }

  void setInterest(FdEvents interest) override {
    entry_->interest = interest;
    QbDispatcher* owner = entry_->owner;
    if (owner == nullptr) return;
    epoll_event ev{};
    ev.events = epollEvents(interest);
    ev.data.u64 = epollKey(entry_->fd, entry_->generation);
    (void)::epoll_ctl(owner->epoll_fd_, EPOLL_CTL_MOD, entry_->fd, &ev);
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
  int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) return fail(errnoError(errno, "epoll_create1"));
  int timer_fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (timer_fd < 0) {
    int err = errno;
    ::close(epoll_fd);
    return fail(errnoError(err, "timerfd_create"));
  }
  qb_loop_t* loop = qb_loop_create();
  if (loop == nullptr) {
    ::close(epoll_fd);
    ::close(timer_fd);
    return fail(ErrorCode::kUnavailable, "qb_loop_create failed");
  }
  // From here the destructor closes both fds and destroys the loop.
  std::unique_ptr<QbDispatcher> d(new QbDispatcher(loop, epoll_fd, timer_fd));
  if (int32_t rc = qb_loop_poll_add(loop, QB_LOOP_MED, epoll_fd, POLLIN, d.get(),
                                    &QbDispatcher::dispatchEpoll);
      rc != 0) {
    return fail(errnoError(-rc, "cannot register the epoll fd with qb_loop"));
  }
  if (int32_t rc = qb_loop_poll_add(loop, QB_LOOP_MED, timer_fd, POLLIN, d.get(),
                                    &QbDispatcher::dispatchTimerFd);
      rc != 0) {
    return fail(errnoError(-rc, "cannot register the timerfd with qb_loop"));
  }
  // libqb resets every unwatched signal to SIG_DFL, which for SIGPIPE means a write to a
  // closed pipe kills the daemon. Watching it with a no-op turns that into EPIPE.
  if (auto r = d->addSignal(SIGPIPE, [] {}); !r) return fail(r.error());
  return d;
}

QbDispatcher::QbDispatcher(qb_loop_t* loop, int epoll_fd, int timer_fd)
    : loop_(loop), epoll_fd_(epoll_fd), timer_fd_(timer_fd) {}

QbDispatcher::~QbDispatcher() {
  while (!signals_.empty()) removeSignal(signals_.begin()->first);
  // Handles still alive must not reach back into a dispatcher that is gone.
  for (FdEntry* e : fds_) {
    if (e != nullptr) e->owner = nullptr;
  }
  for (auto& [deadline, timer] : timers_) timer->armed_ = false;
  timers_.clear();
  qb_loop_destroy(loop_);
  ::close(epoll_fd_);
  ::close(timer_fd_);
}

MonoTime QbDispatcher::now() const {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return MonoTime(std::chrono::duration_cast<MonoTime::duration>(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

std::unique_ptr<Timer> QbDispatcher::createTimer(std::function<void()> on_fire) {
  return std::make_unique<QbTimer>(this, std::move(on_fire));
}

QbDispatcher::TimerQueue::iterator QbDispatcher::addDeadline(MonoTime deadline, QbTimer* timer) {
  auto pos = timers_.emplace(deadline, timer);
  if (deadline < timer_fd_deadline_) programTimerFd(deadline);
  return pos;
}

void QbDispatcher::programTimerFd(MonoTime deadline) {
  itimerspec spec{};
  if (deadline != MonoTime::max()) spec.it_value = toTimespec(deadline);
  if (::timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr) != 0) {
    fatal("cannot arm the timerfd", errno);
  }
  timer_fd_deadline_ = deadline;
}

int32_t QbDispatcher::dispatchTimerFd(int32_t /*fd*/, int32_t /*revents*/, void* data) {
  static_cast<QbDispatcher*>(data)->runDueTimers();
  return 0;  // non-zero would make libqb forget the registration
}

void QbDispatcher::runDueTimers() {
  uint64_t expirations = 0;
  // EAGAIN when re-armed since it expired: the deadlines below are what counts, not the count.
  if (::read(timer_fd_, &expirations, sizeof expirations) < 0) expirations = 0;
  // Set again once, below, for whatever is earliest then: timers armed by the callbacks meanwhile
  // need no timerfd_settime each.
  timer_fd_deadline_ = MonoTime::min();
  const MonoTime due = now();
  // One at a time from the front: a callback may arm, cancel or destroy any timer, including
  // one due in this same round.
  while (!timers_.empty() && timers_.begin()->first <= due) {
    QbTimer* timer = timers_.begin()->second;
    timers_.erase(timers_.begin());
    timer->fire();
  }
  programTimerFd(timers_.empty() ? MonoTime::max() : timers_.begin()->first);
}

Result<std::unique_ptr<FdWatch>> QbDispatcher::watchFd(
    int fd, FdEvents interest, std::function<void(FdEvents ready)> on_ready) {
  if (fd < 0) return fail(ErrorCode::kInvalidArgument, "cannot watch fd " + std::to_string(fd));
  auto index = static_cast<size_t>(fd);
  if (index < fds_.size() && fds_[index] != nullptr) {
    return fail(ErrorCode::kAlreadyExists, "fd " + std::to_string(fd) + " is already watched");
  }
  auto entry = std::make_unique<FdEntry>();
  entry->owner = this;
  entry->fd = fd;
  entry->generation = ++next_generation_;
  entry->interest = interest;
  entry->on_ready = std::move(on_ready);
  epoll_event ev{};
  ev.events = epollEvents(interest);
  ev.data.u64 = epollKey(fd, entry->generation);
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    int err = errno;
    if (err == EEXIST) {
      return fail(ErrorCode::kAlreadyExists, "fd " + std::to_string(fd) + " is already watched");
    }
    return fail(errnoError(err, "cannot watch fd " + std::to_string(fd)));
  }
  if (index >= fds_.size()) fds_.resize(index + 1, nullptr);
  fds_[index] = entry.get();
  return std::unique_ptr<FdWatch>(std::make_unique<QbFdWatch>(std::move(entry)));
}

void QbDispatcher::releaseFd(FdEntry& entry) {
  // EBADF when the fd was closed first: the kernel already dropped it from the set.
  (void)::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, entry.fd, nullptr);
  fds_[static_cast<size_t>(entry.fd)] = nullptr;
}

int32_t QbDispatcher::dispatchEpoll(int32_t /*fd*/, int32_t /*revents*/, void* data) {
  static_cast<QbDispatcher*>(data)->runFdBatch();
  return 0;  // non-zero would make libqb forget the registration
}

void QbDispatcher::runFdBatch() {
  // Level-triggered, so what a batch leaves unread (or beyond it) is reported next turn.
  int n = ::epoll_wait(epoll_fd_, events_.data(), kFdBatch, 0);
  if (n <= 0) return;
  in_fd_batch_ = true;
  for (int i = 0; i < n; ++i) {
    const uint64_t key = events_[static_cast<size_t>(i)].data.u64;
    const uint32_t revents = events_[static_cast<size_t>(i)].events;
    const auto index = static_cast<size_t>(key & 0xffffffffu);
    // A callback earlier in the batch may have destroyed this watch, or replaced it on the
    // same fd: the generation tells the new entry from the one the event was for.
    if (index >= fds_.size()) continue;
    FdEntry* e = fds_[index];
    if (e == nullptr || e->generation != static_cast<uint32_t>(key >> 32)) continue;
    FdEvents ready{(revents & (EPOLLIN | EPOLLPRI)) != 0, (revents & EPOLLOUT) != 0};
    if (revents & (EPOLLERR | EPOLLHUP)) {
      // The next read or write reports it as EOF or errno.
      if (e->interest.readable || !e->interest.writable) {
        ready.readable = true;
      } else {
        ready.writable = true;
      }
    }
    e->on_ready(ready);
  }
  in_fd_batch_ = false;
  retired_fds_.clear();
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
