#include "metrics/http_server.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "common/socket_address.h"

namespace tandem::metrics {

struct HttpServer::Connection {
  int fd = -1;
  uint64_t number = 0;  // the order of its accept: the oldest has the smallest
  std::string peer;
  std::unique_ptr<loop::FdWatch> watch;
  std::unique_ptr<loop::Timer> deadline;
  std::string in;
  std::string out;
  size_t sent = 0;
  // The answer is out and our side shut: read until the peer closes, so that closing with its
  // bytes unread never resets the connection before it has read the answer.
  bool draining = false;
  bool peer_closed = false;  // its read side reached EOF
  size_t drained = 0;        // bytes read and dropped while draining
};

namespace {
constexpr size_t kDrainPerWakeup = 64 * 1024;
constexpr size_t kDrainTotal = 1024 * 1024;
}  // namespace

namespace {

std::string endpointText(const sockaddr_storage& sa) {
  const IpAddress a = fromSocketAddress(sa);
  const uint16_t port = sa.ss_family == AF_INET6
                            ? ntohs(reinterpret_cast<const sockaddr_in6&>(sa).sin6_port)
                            : ntohs(reinterpret_cast<const sockaddr_in&>(sa).sin_port);
  return a.family == Family::kInet6 ? "[" + a.toString() + "]:" + std::to_string(port)
                                    : a.toString() + ":" + std::to_string(port);
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::listen(loop::Dispatcher& dispatcher,
                                                       const IpAddress& address, uint16_t port,
                                                       Scrape scrape, LogSink log,
                                                       HttpLimits limits) {
  const SocketAddress sa = toSocketAddress(address, port);
  const std::string where = address.family == Family::kInet6
                                ? "[" + address.toString() + "]:" + std::to_string(port)
                                : address.toString() + ":" + std::to_string(port);
  int fd = ::socket(sa.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errnoError(errno, "metrics socket for " + where));
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (sa.storage.ss_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
  if (::bind(fd, sa.get(), sa.length) != 0 || ::listen(fd, 16) != 0) {
    int err = errno;
    ::close(fd);
    return fail(errnoError(err, "cannot listen on " + where + " for the metrics (metrics.listen)"));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const uint16_t bound_port = bound.ss_family == AF_INET6
                                  ? ntohs(reinterpret_cast<sockaddr_in6&>(bound).sin6_port)
                                  : ntohs(reinterpret_cast<sockaddr_in&>(bound).sin_port);
  std::unique_ptr<HttpServer> server(
      new HttpServer(dispatcher, fd, bound_port, std::move(scrape), std::move(log), limits));
  auto watch =
      dispatcher.watchFd(fd, {true, false}, [s = server.get()](loop::FdEvents) { s->acceptAll(); });
  if (!watch) return fail(watch.error());
  server->watch_ = std::move(*watch);
  return server;
}

HttpServer::HttpServer(loop::Dispatcher& dispatcher, int fd, uint16_t port, Scrape scrape,
                       LogSink log, HttpLimits limits)
    : dispatcher_(dispatcher),
      fd_(fd),
      port_(port),
      scrape_(std::move(scrape)),
      log_(std::move(log)),
      limits_(limits) {}

HttpServer::~HttpServer() {
  for (auto& [fd, c] : connections_) {
    c->watch.reset();
    ::close(fd);
  }
  connections_.clear();
  watch_.reset();
  ::close(fd_);
}

void HttpServer::acceptAll() {
  while (!paused_) {
    // Full: room is made only for a connection that is there, and only when one can go.
    const bool full = connections_.size() >= limits_.max_connections;
    if (full && slowest() == nullptr) break;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        // Out of descriptors or memory: the listener stays readable, and watching it would
        // spin the loop. It rests a second, with one line for the pause.
        log_(LogLevel::kWarning, "metrics: accept failed, pausing the endpoint for 1s: " +
                                     errnoError(errno, "accept").message);
        paused_ = true;
        if (!resume_) {
          resume_ = dispatcher_.createTimer([this] {
            paused_ = false;
            updateListening();
            acceptAll();
          });
        }
        resume_->arm(Millis(1000));
      }
      break;
    }
    if (full) evict(*slowest());
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->number = ++accepted_;
    c->peer = endpointText(peer);
    Connection* raw = c.get();
    auto watch = dispatcher_.watchFd(fd, {true, false}, [this, raw](loop::FdEvents) {
      if (raw->draining) {
        drain(*raw);
      } else if (!raw->out.empty()) {
        onWritable(*raw);
      } else {
        onReadable(*raw);
      }
    });
    if (!watch) {
      ::close(fd);
      log_(LogLevel::kWarning, "metrics: cannot watch a connection: " + watch.error().message);
      continue;
    }
    c->watch = std::move(*watch);
    c->deadline = dispatcher_.createTimer([this, fd] {
      auto it = connections_.find(fd);
      if (it == connections_.end()) return;
      if (!it->second->draining) {
        log_(LogLevel::kDebug, "metrics: closed a connection from " + it->second->peer +
                                   " that did not finish its " +
                                   (it->second->out.empty() ? "request" : "answer") + " in time");
      }
      close(fd);
    });
    c->deadline->arm(limits_.request_timeout);
    connections_.emplace(fd, std::move(c));
  }
  updateListening();
}

HttpServer::Connection* HttpServer::slowest() {
  Connection* oldest = nullptr;
  for (auto& [fd, c] : connections_) {
    if (!c->out.empty() || c->draining) continue;  // being answered: it finishes on its own
    if (oldest == nullptr || c->number < oldest->number) oldest = c.get();
  }
  return oldest;
}

void HttpServer::evict(Connection& c) {
  ++evicted_;
  const loop::MonoTime now = dispatcher_.now();
  if (!eviction_logged_ || now - *eviction_logged_ >= Millis(10000)) {
    eviction_logged_ = now;
    log_(LogLevel::kNotice, "metrics: all " + std::to_string(limits_.max_connections) +
                                " connections taken; closed the oldest unfinished request, from " +
                                c.peer + ", to serve a new one (" + std::to_string(evicted_) +
                                " so far; slow or stuck clients of the endpoint?)");
  }
  drop(c.fd);  // the caller accepts in its place
}

// With every connection being answered the listener is not watched: new ones wait in the
// backlog. While one is still reading its request, a new connection takes its place.
void HttpServer::updateListening() {
  const bool want =
      !paused_ && (connections_.size() < limits_.max_connections || slowest() != nullptr);
  if (want == listening_) return;
  listening_ = want;
  watch_->setInterest({want, false});
}

void HttpServer::onReadable(Connection& c) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(c.fd, buf, sizeof buf);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
      if (c.in.size() > kMaxRequestBytes) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // EOF (or an error): a client that half-closes after its request is still answered.
    c.peer_closed = true;
    break;
  }
  if (!c.out.empty()) return;  // already answering: what more comes is not read
  ParsedRequest parsed = parseRequest(c.in);
  switch (parsed.status) {
    case ParsedRequest::Status::kIncomplete:
      if (c.peer_closed) close(c.fd);  // it went away before a whole request
      return;
    case ParsedRequest::Status::kBad:
      log_(LogLevel::kDebug, "metrics: bad request from " + c.peer + ": " + parsed.why);
      answer(c, badRequest(parsed));
      return;
    case ParsedRequest::Status::kComplete:
      answer(c, respond(parsed.request, scrape_));
      return;
  }
}

void HttpServer::answer(Connection& c, const HttpResponse& response) {
  c.out = responseHead(response);
  if (!response.head) c.out += response.body;
  c.in.clear();
  ++served_;
  c.deadline->arm(limits_.write_timeout);
  c.watch->setInterest({false, true});
  onWritable(c);
}

void HttpServer::onWritable(Connection& c) {
  while (c.sent < c.out.size()) {
    ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n > 0) {
      c.sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // the rest when writable
    break;                                                           // the peer went away
  }
  // All sent (or the peer is gone): a half close, then what the peer still sends is read
  // until it closes too.
  ::shutdown(c.fd, SHUT_WR);
  c.draining = true;
  c.watch->setInterest({true, false});
  c.deadline->arm(limits_.request_timeout);
  drain(c);
}

void HttpServer::drain(Connection& c) {
  // At most kDrainPerWakeup a call (the loop comes back while there is more: level-triggered),
  // and kDrainTotal in all: a client that keeps sending after its answer can neither hold the
  // loop nor keep its connection.
  char buf[4096];
  size_t this_time = 0;
  while (this_time < kDrainPerWakeup) {
    ssize_t n = c.peer_closed ? 0 : ::read(c.fd, buf, sizeof buf);
    if (n > 0) {
      this_time += static_cast<size_t>(n);
      c.drained += static_cast<size_t>(n);
      if (c.drained > kDrainTotal) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    break;  // EOF or an error: done
  }
  if (this_time >= kDrainPerWakeup && c.drained <= kDrainTotal) return;
  close(c.fd);
}

void HttpServer::drop(int fd) {
  auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  it->second->watch.reset();
  it->second->deadline.reset();
  connections_.erase(it);
  ::close(fd);
}

void HttpServer::close(int fd) {
  if (!connections_.count(fd)) return;
  drop(fd);
  updateListening();
  // A connection waiting in the backlog is taken now rather than at the next one.
  if (listening_) acceptAll();
}

}  // namespace tandem::metrics
