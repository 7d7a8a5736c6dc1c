#include "health/tcp_checker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "health/probe_socket.h"
#include "health/reasons.h"

namespace tandem::resources::health {

TcpChecker::TcpChecker(loop::Dispatcher& dispatcher) : dispatcher_(dispatcher) {
  timer_ = dispatcher_.createTimer([this] {
    if (early_) {
      auto [ok, reason] = std::move(*early_);
      early_.reset();
      finish(ok, std::move(reason));
      return;
    }
    finish(false, timedOutReason(timeout_));
  });
}

TcpChecker::~TcpChecker() { closeSocket(); }

void TcpChecker::probe(const ProbeTarget& target, ProbeDone done) {
  cancel();
  done_ = std::move(done);
  reset_ = target.check.tcp_reset;
  timeout_ = target.check.timeout;
  started_ = dispatcher_.now();
  auto at_once = [this](std::string reason) {
    early_ = std::make_pair(false, std::move(reason));
    timer_->arm(Millis(0));
  };

  std::string reason;
  fd_ = openProbeSocket(target, SOCK_STREAM, reason);
  if (fd_ < 0) {
    at_once(std::move(reason));
    return;
  }
  const SocketAddress sa = toSocketAddress(target.address.address, target.address.port);
  if (::connect(fd_, sa.get(), sa.length) == 0) {
    early_ = std::make_pair(true, std::string("connected"));
    timer_->arm(Millis(0));
    return;
  }
  if (errno != EINPROGRESS) {
    const int err = errno;
    closeSocket();
    at_once(errnoReason(err));
    return;
  }
  auto watch = dispatcher_.watchFd(fd_, loop::FdEvents{false, true}, [this](loop::FdEvents) {
    int err = 0;
    socklen_t l = sizeof err;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &l) != 0) err = errno;
    if (err == 0) {
      finish(true, "connected");
    } else {
      finish(false, errnoReason(err));
    }
  });
  if (!watch) {
    closeSocket();
    at_once("cannot watch the socket: " + watch.error().message);
    return;
  }
  watch_ = std::move(*watch);
  timer_->arm(timeout_);
}

void TcpChecker::finish(bool ok, std::string reason) {
  timer_->cancel();
  closeSocket();
  ProbeDone done = std::move(done_);
  done_ = nullptr;
  const auto took = std::chrono::duration_cast<Millis>(dispatcher_.now() - started_);
  if (done) done(ProbeResult{ok, std::move(reason), took});
}

void TcpChecker::cancel() {
  timer_->cancel();
  early_.reset();
  done_ = nullptr;
  closeSocket();
}

void TcpChecker::closeSocket() {
  watch_.reset();  // before the fd closes
  if (fd_ < 0) return;
  if (reset_) {
    linger l{1, 0};
    (void)::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }
  ::close(fd_);
  fd_ = -1;
}

}  // namespace tandem::resources::health
