#include "health/tcp_checker.h"

#include <sys/socket.h>

#include <cerrno>
#include <string>
#include <utility>

#include "health/probe_socket.h"
#include "health/reasons.h"

namespace tandem::resources::health {

TcpChecker::TcpChecker(loop::Dispatcher& dispatcher)
    : run_(dispatcher, [this] { run_.finish(false, timedOutReason(timeout_)); }) {}

TcpChecker::~TcpChecker() = default;

void TcpChecker::probe(const ProbeTarget& target, ProbeDone done) {
  run_.begin(std::move(done));
  timeout_ = target.check.timeout;
  std::string reason;
  const int fd = openProbeSocket(target, SOCK_STREAM, reason);
  if (fd < 0) return run_.soon(false, std::move(reason));
  if (target.check.tcp_reset) {
    // Whenever the socket closes, it closes with a reset.
    linger l{1, 0};
    (void)::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }
  // Watched before the connect, so that the probe owns the socket whatever happens next; the
  // watch reports nothing before the loop comes round.
  const bool watched = run_.watch(fd, loop::FdEvents{false, true}, [this](loop::FdEvents) {
    int err = 0;
    socklen_t l = sizeof err;
    if (::getsockopt(run_.fd(), SOL_SOCKET, SO_ERROR, &err, &l) != 0) err = errno;
    if (err == 0) return run_.finish(true, "connected");
    run_.finish(false, errnoReason(err));
  });
  if (!watched) return;
  const SocketAddress sa = toSocketAddress(target.address.address, target.address.port);
  if (::connect(fd, sa.get(), sa.length) == 0) return run_.soon(true, "connected");
  if (errno != EINPROGRESS) return run_.soon(false, errnoReason(errno));
  run_.armTimeout(timeout_);
}

void TcpChecker::cancel() { run_.cancel(); }

}  // namespace tandem::resources::health
