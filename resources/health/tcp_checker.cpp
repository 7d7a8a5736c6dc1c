#include "health/tcp_checker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

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

  sockaddr_storage sa{};
  socklen_t len = 0;
  const Endpoint& e = target.address;
  if (e.address.family == Family::kInet) {
    auto* in = reinterpret_cast<sockaddr_in*>(&sa);
    in->sin_family = AF_INET;
    in->sin_port = htons(e.port);
    std::memcpy(&in->sin_addr, e.address.bytes.data(), 4);
    len = sizeof(sockaddr_in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&sa);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(e.port);
    std::memcpy(&in6->sin6_addr, e.address.bytes.data(), 16);
    len = sizeof(sockaddr_in6);
  }
  fd_ = ::socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    at_once("cannot open a socket: " + errnoReason(errno));
    return;
  }
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&sa), len) == 0) {
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
