#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/ip_address.h"
#include "loop/dispatcher.h"
#include "resources/health/real_loop_test.h"

// A canned HTTP server for checker tests, on the test's own loop: it listens on a loopback
// address, reads each request up to its blank line, records it, and writes one canned response
// (or nothing at all), then closes. With an SSL_CTX it speaks TLS. Everything is non-blocking
// on the dispatcher, so a test runs the loop until the checker's result and never sleeps.
namespace tandem::test {

class LoopHttpServer {
 public:
  // response: written whole after each request, then the connection is closed (an empty one
  // closes at once); nullopt: never answered, the connection held until the client leaves.
  LoopHttpServer(loop::Dispatcher& dispatcher, Family family, std::optional<std::string> response,
                 SSL_CTX* tls = nullptr)
      : dispatcher_(dispatcher),
        response_(std::move(response)),
        tls_(tls),
        listener_(family, 16, SOCK_NONBLOCK) {
    auto watch = dispatcher_.watchFd(listener_.fd, loop::FdEvents{true, false},
                                     [this](loop::FdEvents) { acceptAll(); });
    EXPECT_TRUE(watch.has_value());
    if (watch) listen_watch_ = std::move(*watch);
  }
  ~LoopHttpServer() {
    conns_.clear();
    listen_watch_.reset();  // before the listener closes its fd
  }
  LoopHttpServer(const LoopHttpServer&) = delete;
  LoopHttpServer& operator=(const LoopHttpServer&) = delete;

  const Endpoint& endpoint() const { return listener_.endpoint; }
  uint16_t port() const { return listener_.port; }
  // Each request's head, as received.
  const std::vector<std::string>& requests() const { return requests_; }
  // The server name each TLS client asked for (SNI), "" for none.
  const std::vector<std::string>& serverNames() const { return server_names_; }
  int accepted() const { return accepted_; }
  // The source address of each IPv4 connection, in order.
  const std::vector<std::string>& peers() const { return peers_; }
  size_t bytesSent() const { return bytes_sent_; }
  // Called when a request is complete.
  void onRequest(std::function<void()> f) { on_request_ = std::move(f); }
  // Called when a connection is over, closed by either side.
  void onClose(std::function<void()> f) { on_close_ = std::move(f); }

 private:
  struct Conn {
    int fd = -1;
    SSL* ssl = nullptr;
    std::unique_ptr<loop::FdWatch> watch;
    std::string in;
    bool requested = false;
    size_t sent = 0;
    ~Conn() {
      watch.reset();
      if (ssl != nullptr) SSL_free(ssl);
      if (fd >= 0) ::close(fd);
    }
  };
  enum class Io { kData, kWantRead, kWantWrite, kClosed };

  void acceptAll() {
    for (;;) {
      sockaddr_storage peer{};
      socklen_t peer_len = sizeof peer;
      int fd = ::accept4(listener_.fd, reinterpret_cast<sockaddr*>(&peer), &peer_len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      ++accepted_;
      if (peer.ss_family == AF_INET) {
        char text[INET_ADDRSTRLEN] = {};
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
        peers_.emplace_back(text);
      }
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      if (tls_ != nullptr) {
        c->ssl = SSL_new(tls_);
        SSL_set_fd(c->ssl, fd);
        SSL_set_accept_state(c->ssl);
      }
      auto watch = dispatcher_.watchFd(fd, loop::FdEvents{true, false}, [this, fd](loop::FdEvents) {
        auto it = conns_.find(fd);
        if (it != conns_.end() && !step(*it->second)) close(it);
      });
      EXPECT_TRUE(watch.has_value());
      if (!watch) continue;
      c->watch = std::move(*watch);
      conns_.emplace(fd, std::move(c));
    }
  }

  void close(std::map<int, std::unique_ptr<Conn>>::iterator it) {
    conns_.erase(it);  // from inside its own watch's callback, which the dispatcher allows
    if (on_close_) on_close_();
  }

  std::pair<Io, size_t> readSome(Conn& c, char* buf, size_t len) {
    if (c.ssl != nullptr) {
      ERR_clear_error();
      int n = SSL_read(c.ssl, buf, static_cast<int>(len));
      if (n > 0) return {Io::kData, static_cast<size_t>(n)};
      return {tlsWants(c, n), 0};
    }
    ssize_t n = ::recv(c.fd, buf, len, 0);
    if (n > 0) return {Io::kData, static_cast<size_t>(n)};
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return {Io::kWantRead, 0};
    return {Io::kClosed, 0};
  }

  std::pair<Io, size_t> writeSome(Conn& c, const char* buf, size_t len) {
    if (c.ssl != nullptr) {
      ERR_clear_error();
      int n = SSL_write(c.ssl, buf, static_cast<int>(len));
      if (n > 0) return {Io::kData, static_cast<size_t>(n)};
      return {tlsWants(c, n), 0};
    }
    ssize_t n = ::send(c.fd, buf, len, MSG_NOSIGNAL);
    if (n > 0) return {Io::kData, static_cast<size_t>(n)};
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return {Io::kWantWrite, 0};
    return {Io::kClosed, 0};
  }

  static Io tlsWants(Conn& c, int n) {
    switch (SSL_get_error(c.ssl, n)) {
      case SSL_ERROR_WANT_READ:
        return Io::kWantRead;
      case SSL_ERROR_WANT_WRITE:
        return Io::kWantWrite;
      default:
        return Io::kClosed;  // a failed handshake too: the client refused the certificate
    }
  }

  // Moves the connection on as far as it goes; false when it is over.
  bool step(Conn& c) {
    char buf[4096];
    while (!c.requested || !response_) {
      auto [io, n] = readSome(c, buf, sizeof buf);
      if (io == Io::kWantRead || io == Io::kWantWrite) return wait(c, io);
      if (io == Io::kClosed) return false;
      if (c.requested) continue;  // never answered: what else comes is dropped
      c.in.append(buf, n);
      if (c.in.find("\r\n\r\n") == std::string::npos) continue;
      c.requested = true;
      requests_.push_back(c.in);
      if (c.ssl != nullptr) {
        const char* name = SSL_get_servername(c.ssl, TLSEXT_NAMETYPE_host_name);
        server_names_.push_back(name != nullptr ? name : "");
      }
      if (on_request_) on_request_();
    }
    const std::string& out = *response_;
    while (c.sent < out.size()) {
      // The same arguments again after a WANT_*, as SSL_write requires.
      auto [io, n] =
          writeSome(c, out.data() + c.sent, std::min<size_t>(16384, out.size() - c.sent));
      if (io == Io::kWantRead || io == Io::kWantWrite) return wait(c, io);
      if (io == Io::kClosed) return false;  // the client stopped reading and left
      c.sent += n;
      bytes_sent_ += n;
    }
    if (c.ssl != nullptr) (void)SSL_shutdown(c.ssl);
    return false;  // all written: closing ends a body that has no Content-Length
  }

  static bool wait(Conn& c, Io io) {
    c.watch->setInterest(loop::FdEvents{io == Io::kWantRead, io == Io::kWantWrite});
    return true;
  }

  loop::Dispatcher& dispatcher_;
  std::optional<std::string> response_;
  SSL_CTX* tls_;
  LoopbackListener listener_;
  std::unique_ptr<loop::FdWatch> listen_watch_;
  std::map<int, std::unique_ptr<Conn>> conns_;
  std::vector<std::string> requests_;
  std::vector<std::string> peers_;
  std::vector<std::string> server_names_;
  int accepted_ = 0;
  size_t bytes_sent_ = 0;
  std::function<void()> on_request_;
  std::function<void()> on_close_;
};

}  // namespace tandem::test
