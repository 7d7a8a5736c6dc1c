#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/ip_address.h"
#include "common/log.h"
#include "common/result.h"
#include "loop/dispatcher.h"
#include "metrics/http_exchange.h"

// The metrics endpoint's socket: a TCP listener on the loop that reads each request, answers it
// (http_exchange.h) and closes the connection. Nothing here blocks: accepts, reads and writes
// are loop events, a large answer goes out as the socket takes it, and a connection that does
// not finish its request within request_timeout, or does not take its answer within
// write_timeout, is closed. At most max_connections are open at once. When all are taken and
// another client connects, the oldest connection still sending its request is closed to make
// room (a handful of slow or silent clients cannot shut out a scrape; the first of a burst and
// then one line in 10 s say so, at notice); only when every connection is being answered do new
// ones wait in the kernel's backlog. The answer is rendered only once the request is complete.
namespace tandem::metrics {

struct HttpLimits {
  size_t max_connections = 16;
  Millis request_timeout{5000};
  Millis write_timeout{10000};
};

class HttpServer {
 public:
  // Listens on address:port (port 0: any; port() says which). Fails naming the address when
  // the socket cannot be had (in use, not an address of this host).
  [[nodiscard]] static Result<std::unique_ptr<HttpServer>> listen(loop::Dispatcher& dispatcher,
                                                                  const IpAddress& address,
                                                                  uint16_t port, Scrape scrape,
                                                                  LogSink log,
                                                                  HttpLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const { return port_; }
  size_t connections() const { return connections_.size(); }
  uint64_t served() const { return served_; }
  // Connections closed before their request was complete, to make room for a new one.
  uint64_t evicted() const { return evicted_; }

 private:
  struct Connection;
  HttpServer(loop::Dispatcher& dispatcher, int fd, uint16_t port, Scrape scrape, LogSink log,
             HttpLimits limits);
  void acceptAll();
  void onReadable(Connection& c);
  void onWritable(Connection& c);
  void drain(Connection& c);
  void answer(Connection& c, const HttpResponse& response);
  // close: drop, then take what waits in the backlog; drop: the connection only.
  void close(int fd);
  void drop(int fd);
  void updateListening();
  // The oldest connection still reading its request (nullptr: every one is being answered),
  // and its closing to make room for a new one.
  Connection* slowest();
  void evict(Connection& c);

  loop::Dispatcher& dispatcher_;
  int fd_;
  uint16_t port_;
  Scrape scrape_;
  LogSink log_;
  HttpLimits limits_;
  std::unique_ptr<loop::FdWatch> watch_;
  bool listening_ = true;
  bool paused_ = false;  // accept failed for want of descriptors or memory
  std::unique_ptr<loop::Timer> resume_;
  std::map<int, std::unique_ptr<Connection>> connections_;
  uint64_t served_ = 0;
  uint64_t evicted_ = 0;
  uint64_t accepted_ = 0;                          // each connection's number, in order
  std::optional<loop::MonoTime> eviction_logged_;  // the last notice of an eviction
};

}  // namespace tandem::metrics
