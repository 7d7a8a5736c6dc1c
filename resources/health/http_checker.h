#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "health/checker.h"
#include "loop/dispatcher.h"

// The http and https checks: one request by libcurl, driven by the loop through curl's
// multi-socket interface (curl's sockets are watched on the dispatcher, its timeouts are a
// dispatcher timer), so a probe never blocks. Healthy when the answer arrives within the
// timeout, its status is in expect_status, and its body (read up to max_response bytes, no
// further) holds expect_body and matches expect_body_regex. Probes leave from source_address. Each
// probe opens a connection of its own and closes it, so a probe tests what a new client meets. With
// `host` set, the request names that host (Host header, SNI, the name a verified certificate must
// carry) while connecting to the real server's address. Where the network is touched.
namespace tandem::resources::health {

class HttpChecker final : public Checker {
 public:
  explicit HttpChecker(loop::Dispatcher& dispatcher);
  ~HttpChecker() override;
  HttpChecker(const HttpChecker&) = delete;
  HttpChecker& operator=(const HttpChecker&) = delete;

  void probe(const ProbeTarget& target, ProbeDone done) override;
  void cancel() override;

 private:
  struct Curl;  // the libcurl handles; curl.h stays out of this header
  struct BodyRegex;

  // curl asks for a socket to be watched (or no longer).
  void watchSocket(int fd, int what);
  // Tells curl that fd (or, for CURL_SOCKET_TIMEOUT, its timer) is ready, then ends the probe
  // if curl is done with it.
  void drive(int fd, int ready);
  size_t takeBody(const char* data, size_t len);
  ProbeResult judge(int code) const;
  // Calls done last, touching nothing after it: done may destroy the checker.
  void finish(bool ok, std::string reason);
  void endTransfer();

  loop::Dispatcher& dispatcher_;
  std::unique_ptr<Curl> curl_;
  std::unique_ptr<loop::Timer> timer_;  // curl's next timeout, or 0 ms for a result known at once
  std::map<int, std::unique_ptr<loop::FdWatch>> watches_;  // curl's sockets
  config::Check check_;
  loop::MonoTime started_{};
  ProbeDone done_;
  std::unique_ptr<BodyRegex> regex_;
  std::string body_;  // kept only when expect_body or expect_body_regex needs it
  size_t body_bytes_ = 0;
  bool too_large_ = false;
  std::string watch_error_;  // a socket the loop could not watch: the probe fails with it
  // A failure known before probe() returned, delivered from the loop.
  std::optional<std::string> early_;
};

}  // namespace tandem::resources::health
