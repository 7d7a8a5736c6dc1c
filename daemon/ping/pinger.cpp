#include "ping/pinger.h"

#include <algorithm>

namespace tandem::ping {

Result<std::unique_ptr<Pinger>> Pinger::create(loop::Dispatcher& dispatcher,
                                               const config::Tiebreaker& cfg, uint64_t nonce,
                                               const MakeEchoTransport& make, OnChange on_change,
                                               Millis regain_after) {
  if (cfg.targets.empty()) {
    return fail(ErrorCode::kInvalidArgument, "[cluster.tiebreaker] has no targets");
  }
  bool v4 = false;
  bool v6 = false;
  for (const IpAddress& t : cfg.targets) (t.family == Family::kInet ? v4 : v6) = true;
  std::unique_ptr<Pinger> p(new Pinger(dispatcher, cfg, nonce, std::move(on_change), regain_after));
  Pinger* raw = p.get();
  auto transport = make(v4, v6, [raw](const IpAddress& from, std::span<const uint8_t> icmp) {
    raw->onIcmp(from, icmp);
  });
  if (!transport) return fail(transport.error());
  p->transport_ = std::move(*transport);
  return p;
}

Pinger::Pinger(loop::Dispatcher& dispatcher, const config::Tiebreaker& cfg, uint64_t nonce,
               OnChange on_change, Millis regain_after)
    : dispatcher_(dispatcher),
      interval_(cfg.interval),
      identifier_(static_cast<uint16_t>(nonce ^ (nonce >> 16) ^ (nonce >> 32) ^ (nonce >> 48))),
      tracker_(cfg.targets, cfg.timeout, regain_after),
      on_change_(std::move(on_change)) {
  for (int shift = 56; shift >= 0; shift -= 8)
    payload_.push_back(static_cast<uint8_t>(nonce >> shift));
  round_timer_ = dispatcher_.createTimer([this] {
    round();
    round_timer_->arm(interval_);
  });
  deadline_timer_ = dispatcher_.createTimer([this] {
    report(tracker_.onTick(dispatcher_.now()));
    armDeadline();
  });
}

Pinger::~Pinger() {
  // The transport's watch calls back into this object: it goes first.
  transport_.reset();
}

void Pinger::start() { round_timer_->arm(Millis(0)); }

void Pinger::round() {
  uint16_t seq = tracker_.startRound(dispatcher_.now());
  Echo echo{identifier_, seq, payload_};
  Bytes v4;
  Bytes v6;
  for (const IpAddress& t : tracker_.targets()) {
    Bytes& msg = t.family == Family::kInet ? v4 : v6;
    if (msg.empty()) msg = buildEchoRequest(t.family, echo);
    if (!transport_->send(t, msg)) ++send_errors_;
  }
  armDeadline();
}

void Pinger::onIcmp(const IpAddress& from, std::span<const uint8_t> icmp) {
  std::optional<Echo> e = parseEchoReply(from.family, icmp);
  if (!e || e->identifier != identifier_ || e->payload != payload_) return;
  ++replies_;
  report(tracker_.onReply(dispatcher_.now(), from, e->sequence));
  armDeadline();
}

void Pinger::report(const std::optional<ReachChange>& change) {
  if (change && on_change_) on_change_(*change);
}

void Pinger::armDeadline() {
  auto next = tracker_.nextDeadline();
  if (!next) {
    deadline_timer_->cancel();
    return;
  }
  // Rounded up: a timer a hair early would find nothing expired and spin at zero delay.
  auto delay = std::chrono::ceil<Millis>(*next - dispatcher_.now());
  deadline_timer_->arm(std::max(Millis(0), delay));
}

}  // namespace tandem::ping
