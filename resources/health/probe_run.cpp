#include "health/probe_run.h"

#include <unistd.h>

namespace tandem::resources::health {

ProbeRun::ProbeRun(loop::Dispatcher& dispatcher, std::function<void()> on_timeout)
    : dispatcher_(dispatcher) {
  timer_ = dispatcher_.createTimer([this, on_timeout = std::move(on_timeout)] {
    if (soon_) {
      auto [ok, reason] = std::move(*soon_);
      soon_.reset();
      return finish(ok, std::move(reason));
    }
    on_timeout();
  });
}

ProbeRun::~ProbeRun() { closeSocket(); }

void ProbeRun::begin(ProbeDone done) {
  cancel();
  done_ = std::move(done);
  started_ = dispatcher_.now();
}

bool ProbeRun::watch(int fd, loop::FdEvents interest,
                     std::function<void(loop::FdEvents)> on_ready) {
  fd_ = fd;
  auto watch = dispatcher_.watchFd(fd_, interest, std::move(on_ready));
  if (!watch) {
    soon(false, "cannot watch the socket: " + watch.error().message);
    return false;
  }
  watch_ = std::move(*watch);
  return true;
}

void ProbeRun::soon(bool ok, std::string reason) {
  closeSocket();
  soon_ = std::make_pair(ok, std::move(reason));
  timer_->arm(Millis(0));
}

void ProbeRun::finish(bool ok, std::string reason) {
  timer_->cancel();
  closeSocket();
  ProbeDone done = std::move(done_);
  done_ = nullptr;
  const auto took = std::chrono::duration_cast<Millis>(dispatcher_.now() - started_);
  if (done) done(ProbeResult{ok, std::move(reason), took});
}

void ProbeRun::cancel() {
  timer_->cancel();
  soon_.reset();
  done_ = nullptr;
  closeSocket();
}

void ProbeRun::closeSocket() {
  watch_.reset();  // before the fd closes
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
}

}  // namespace tandem::resources::health
