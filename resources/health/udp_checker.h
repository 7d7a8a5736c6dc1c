#pragma once

#include "health/checker.h"
#include "health/probe_run.h"
#include "loop/dispatcher.h"

// The udp check: one datagram (the payload) from a connected UDP socket, healthy when a reply
// holding expect_reply (any reply when empty) comes back within the timeout. On a connected
// socket the kernel delivers only the real server's datagrams, and an ICMP port unreachable
// as ECONNREFUSED, which fails the probe at once. With accept_silence a probe that hears
// nothing at all by the timeout is healthy: it only shows that the port is not closed. One
// datagram of up to 64 KiB is read; a longer one is cut there and judged by what was read.
// Where the network is touched.
namespace tandem::resources::health {

class UdpChecker final : public Checker {
 public:
  explicit UdpChecker(loop::Dispatcher& dispatcher);
  ~UdpChecker() override;
  UdpChecker(const UdpChecker&) = delete;
  UdpChecker& operator=(const UdpChecker&) = delete;

  void probe(const ProbeTarget& target, ProbeDone done) override;
  void cancel() override;

 private:
  void onReadable();
  void onTimeout();

  ProbeRun run_;
  config::Check check_;
};

}  // namespace tandem::resources::health
