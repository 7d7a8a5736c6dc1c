#include "announce/announce_resource.h"

#include <algorithm>
#include <chrono>

namespace tandem::resources::announce {

namespace {

// Frames read per wake-up of the probe socket, so a busy segment cannot hold the loop.
constexpr int kMaxReadsPerWake = 64;

std::string_view burstName(bool first) { return first ? "first" : "second"; }

}  // namespace

AnnounceResource::AnnounceResource(const config::Vip& vip, loop::Dispatcher& dispatcher,
                                   PacketSocketOpener& opener, LogSink log, ForwardsIpv6 forwards)
    : vip_(vip),
      dispatcher_(dispatcher),
      opener_(opener),
      log_(std::move(log)),
      forwards_(std::move(forwards)),
      name_("announce " + vip.address.address.toString()),
      context_("vip=" + vip.address.address.toString() + " dev=" + vip.interface) {
  burst_timer_ = dispatcher_.createTimer([this] { sendAnnouncement(); });
  second_timer_ = dispatcher_.createTimer([this] { beginBurst(Burst::kSecond); });
  refresh_timer_ = dispatcher_.createTimer([this] { onRefresh(); });
  probe_retry_timer_ = dispatcher_.createTimer([this] { sendProbes(); });
  verify_deadline_ = dispatcher_.createTimer([this] { endVerification(); });
}

AnnounceResource::~AnnounceResource() = default;

void AnnounceResource::start(Done done) {
  if (active_) {
    // Already announcing: adopt, as the Resource contract asks.
    done(Result<void>());
    return;
  }
  active_ = true;
  // A fresh socket per takeover: the interface may have been re-created or changed its MAC.
  send_socket_.reset();
  const bool v6 = vip_.address.address.family == Family::kInet6;
  router_ = v6 && forwards_ && forwards_(vip_.interface) ? NaRouter::kSet : NaRouter::kClear;
  beginSchedule();
  done(Result<void>());
}

void AnnounceResource::stop(Done done) {
  active_ = false;
  burst_timer_->cancel();
  second_timer_->cancel();
  refresh_timer_->cancel();
  cancelVerification();
  verification_ = Verification{};
  send_socket_.reset();
  done(Result<void>());
}

void AnnounceResource::monitor(Done done) { done(Result<void>()); }

size_t AnnounceResource::neighboursVerified() const {
  size_t n = 0;
  for (const NeighborResult& r : verification_.neighbors) {
    if (r.answered && r.mac && *r.mac == mac_) ++n;
  }
  return n;
}

nlohmann::json AnnounceResource::describe() const {
  nlohmann::json mac = nullptr;
  if (mac_ != MacAddress{}) mac = mac_.toString();
  return {{"mac", mac}, {"verification", toJson(verification_)}};
}

void AnnounceResource::reannounce() {
  if (!active_) return;
  log_(LogLevel::kInfo, "announcing again after split brain " + context_);
  beginSchedule();
}

void AnnounceResource::beginSchedule() {
  burst_timer_->cancel();
  second_timer_->cancel();
  refresh_timer_->cancel();
  cancelVerification();
  verification_ = Verification{};
  started_at_ = dispatcher_.now();
  if (vip_.announce_refresh > Millis(0)) refresh_timer_->arm(vip_.announce_refresh);
  beginBurst(Burst::kFirst);
}

void AnnounceResource::beginBurst(Burst b) {
  burst_ = b;
  announced_ = 0;
  sent_frames_ = 0;
  failed_frames_ = 0;
  last_error_.clear();
  if (vip_.announce_count <= 0) {
    endBurst();
    return;
  }
  sendAnnouncement();
}

void AnnounceResource::sendAnnouncement() {
  announceOnce();
  ++announced_;
  if (announced_ < vip_.announce_count) {
    burst_timer_->arm(vip_.announce_interval);
    return;
  }
  endBurst();
}

void AnnounceResource::endBurst() {
  const bool first = burst_ == Burst::kFirst;
  if (vip_.announce_count > 0) {
    const std::string line =
        std::string(failed_frames_ > 0 ? "announce incomplete " : "announced ") + context_ +
        " mac=" + mac_.toString() + " burst=" + std::string(burstName(first)) +
        " announcements=" + std::to_string(announced_) + " frames=" + std::to_string(sent_frames_) +
        "/" + std::to_string(sent_frames_ + failed_frames_) +
        (last_error_.empty() ? "" : " error=\"" + last_error_ + "\"");
    log_(failed_frames_ > 0 ? LogLevel::kWarning : LogLevel::kInfo, line);
  }
  if (!first) return;
  if (vip_.announce_count > 0 && vip_.announce_second_burst > Millis(0)) {
    // Measured from the start, but never overlapping the first burst.
    const auto elapsed = std::chrono::duration_cast<Millis>(dispatcher_.now() - started_at_);
    second_timer_->arm(std::max(vip_.announce_second_burst - elapsed, vip_.announce_interval));
  }
  if (!vip_.verify_neighbors.empty()) beginVerification();
}

void AnnounceResource::onRefresh() {
  if (!active_) return;
  const int failed_before = failed_frames_;
  announceOnce();
  if (failed_frames_ > failed_before) {
    log_(LogLevel::kWarning,
         "announce refresh failed " + context_ + " error=\"" + last_error_ + "\"");
  } else {
    log_(LogLevel::kDebug, "announce refresh " + context_ + " mac=" + mac_.toString());
  }
  refresh_timer_->arm(vip_.announce_refresh);
}

bool AnnounceResource::ensureSendSocket() {
  if (send_socket_) return true;
  auto s = opener_.open(vip_.interface, 0);
  if (!s) {
    last_error_ = s.error().message;
    return false;
  }
  send_socket_ = std::move(*s);
  mac_ = send_socket_->mac();
  return true;
}

void AnnounceResource::announceOnce() {
  const IpAddress& vip = vip_.address.address;
  const size_t frames = vip.family == Family::kInet ? 2 : 1;
  if (!ensureSendSocket()) {
    failed_frames_ += static_cast<int>(frames);
    return;
  }
  const std::vector<Frame> all = announcementFrames(mac_, vip, router_);
  for (size_t i = 0; i < all.size(); ++i) {
    auto r = send_socket_->send(all[i]);
    if (r) {
      ++sent_frames_;
      ++frames_total_;
      continue;
    }
    // The rest of this announcement is not tried; it counts as failed too.
    failed_frames_ += static_cast<int>(all.size() - i);
    last_error_ = r.error().message;
    // Reopen next time: the interface may have gone away and come back with a new index.
    send_socket_.reset();
    break;
  }
}

void AnnounceResource::beginVerification() {
  cancelVerification();
  verification_ = Verification{};
  verification_.state = Verification::State::kProbing;
  for (const IpAddress& n : vip_.verify_neighbors) {
    verification_.neighbors.push_back(NeighborResult{n, false, std::nullopt, std::nullopt});
  }
  auto s = opener_.open(vip_.interface, probeEtherType(vip_.address.address.family));
  if (!s) {
    verification_.error = s.error().message;
    endVerification();
    return;
  }
  probe_socket_ = std::move(*s);
  auto w = dispatcher_.watchFd(probe_socket_->fd(), loop::FdEvents{true, false},
                               [this](loop::FdEvents) { onProbeReadable(); });
  if (!w) {
    verification_.error = w.error().message;
    endVerification();
    return;
  }
  probe_watch_ = std::move(*w);
  probes_sent_at_ = dispatcher_.now();
  verify_deadline_->arm(kVerifyTimeout);
  sendProbes();
}

void AnnounceResource::sendProbes() {
  if (!probe_socket_) return;
  const IpAddress& vip = vip_.address.address;
  for (const NeighborResult& n : verification_.neighbors) {
    if (n.answered) continue;
    auto r = probe_socket_->send(buildNeighborProbe(probe_socket_->mac(), vip, n.address));
    if (!r) verification_.error = r.error().message;
  }
  probe_retry_timer_->arm(kProbeRetry);
}

void AnnounceResource::onProbeReadable() {
  for (int i = 0; i < kMaxReadsPerWake && probe_socket_; ++i) {
    auto r = probe_socket_->receive();
    if (!r) {
      verification_.error = r.error().message;
      endVerification();
      return;
    }
    if (!r->has_value()) return;
    const Frame& frame = **r;
    bool all = true;
    for (NeighborResult& n : verification_.neighbors) {
      if (!n.answered) {
        if (auto mac = parseNeighborReply(frame, n.address)) {
          n.answered = true;
          n.mac = *mac;
          n.rtt = std::chrono::duration_cast<std::chrono::microseconds>(dispatcher_.now() -
                                                                        probes_sent_at_);
        }
      }
      all = all && n.answered;
    }
    if (all) {
      endVerification();
      return;
    }
  }
}

void AnnounceResource::endVerification() {
  cancelVerification();
  verification_.state = Verification::State::kDone;
  const bool all = std::all_of(verification_.neighbors.begin(), verification_.neighbors.end(),
                               [](const NeighborResult& n) { return n.answered; });
  std::string line = std::string(all ? "neighbours answered " : "neighbours unverified ") +
                     context_ + " " + summary(verification_);
  if (!verification_.error.empty()) line += " error=\"" + verification_.error + "\"";
  log_(all ? LogLevel::kInfo : LogLevel::kWarning, line);
}

void AnnounceResource::cancelVerification() {
  probe_retry_timer_->cancel();
  verify_deadline_->cancel();
  probe_watch_.reset();
  probe_socket_.reset();
}

}  // namespace tandem::resources::announce

namespace tandem::resources {

std::unique_ptr<announce::AnnounceResource> makeAnnounceResource(
    const config::Vip& vip, loop::Dispatcher& dispatcher, announce::PacketSocketOpener& opener,
    announce::LogSink log, announce::ForwardsIpv6 forwards) {
  return std::make_unique<announce::AnnounceResource>(vip, dispatcher, opener, std::move(log),
                                                      std::move(forwards));
}

}  // namespace tandem::resources
