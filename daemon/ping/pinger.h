#pragma once

#include <functional>
#include <memory>

#include "config/config.h"
#include "loop/dispatcher.h"
#include "ping/echo_transport.h"
#include "ping/icmp_echo.h"
#include "ping/reach_tracker.h"

namespace tandem::ping {

// The tiebreaker's prober: every interval one echo request to each target, all carrying the
// round's sequence number; the verdict comes from ReachTracker. Never blocks: sends are
// non-blocking and replies arrive through the transport's fd watch on the dispatcher.
//
// Replies are matched on the identifier, the payload (a per-run nonce, so that another
// tandemd or ping on the host cannot answer for us), the sequence and the source address.
class Pinger {
 public:
  using OnChange = std::function<void(const ReachChange&)>;

  // nonce: unique per daemon run (tandemd passes its incarnation). regain_after: see
  // ReachTracker.
  [[nodiscard]] static Result<std::unique_ptr<Pinger>> create(
      loop::Dispatcher& dispatcher, const config::Tiebreaker& cfg, uint64_t nonce,
      const MakeEchoTransport& make, OnChange on_change, Millis regain_after = Millis(0));
  Pinger(const Pinger&) = delete;
  Pinger& operator=(const Pinger&) = delete;
  ~Pinger();

  // Sends the first round at once, then one every interval.
  void start();

  Reach state() const { return tracker_.state(); }
  const std::vector<IpAddress>& targets() const { return tracker_.targets(); }
  uint64_t sendErrors() const { return send_errors_; }
  uint64_t replies() const { return replies_; }

 private:
  Pinger(loop::Dispatcher& dispatcher, const config::Tiebreaker& cfg, uint64_t nonce,
         OnChange on_change, Millis regain_after);
  void round();
  void onIcmp(const IpAddress& from, std::span<const uint8_t> icmp);
  void report(const std::optional<ReachChange>& change);
  void armDeadline();

  loop::Dispatcher& dispatcher_;
  Millis interval_;
  uint16_t identifier_;
  Bytes payload_;
  ReachTracker tracker_;
  OnChange on_change_;
  std::unique_ptr<EchoTransport> transport_;
  std::unique_ptr<loop::Timer> round_timer_;
  std::unique_ptr<loop::Timer> deadline_timer_;
  uint64_t send_errors_ = 0;
  uint64_t replies_ = 0;
};

}  // namespace tandem::ping
