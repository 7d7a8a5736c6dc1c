#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "announce/neighbor_report.h"
#include "announce/packet_socket.h"
#include "common/log.h"
#include "config/config.h"
#include "core/resource.h"
#include "loop/dispatcher.h"

namespace tandem::resources::announce {

using LogSink = ::tandem::LogSink;
// Whether an interface forwards IPv6 (net.ipv6.conf.IFACE.forwarding), asked at each takeover
// of an IPv6 VIP for the NA's router flag. Empty or an unreadable answer: not a router.
using ForwardsIpv6 = std::function<bool(const std::string& interface)>;

// How long the neighbour verification waits for answers, and how often it repeats a probe
// that has not been answered yet.
inline constexpr Millis kVerifyTimeout{1000};
inline constexpr Millis kProbeRetry{250};

// Tells the segment that a VIP now lives behind this director's MAC. Placed in the chain right
// after the VIP's address resource.
//
// start sends the first announcement at once (gratuitous ARP request and reply, or an
// unsolicited NA with override), then the rest of the burst: announce_count announcements
// announce_interval apart. announce_second_burst after the start (but never before the first
// burst has ended) a second burst follows; every announce_refresh while held, one more
// announcement. When the first burst has ended, each of verify_neighbors is probed from the
// VIP (ARP request or neighbour solicitation) and verification() reports who answered with
// which MAC. stop cancels all of it.
//
// Announcing is best effort: a frame that cannot be sent is logged as a warning and does not
// fail start, as rolling back a takeover because a switch may miss a frame would leave the VIP
// on no director at all.
class AnnounceResource final : public Resource {
 public:
  AnnounceResource(const config::Vip& vip, loop::Dispatcher& dispatcher, PacketSocketOpener& opener,
                   LogSink log, ForwardsIpv6 forwards = {});
  ~AnnounceResource() override;
  AnnounceResource(const AnnounceResource&) = delete;
  AnnounceResource& operator=(const AnnounceResource&) = delete;

  std::string_view name() const override { return name_; }
  void start(Done done) override;
  void stop(Done done) override;
  // Nothing to repair: the refresh runs on its own timer.
  void monitor(Done done) override;
  // While started: the announcer holds no kernel state a restarted daemon could find.
  bool present() const override { return active_; }

  // After a split brain is resolved: the other side may have announced the VIP last, so this
  // director announces again from the beginning (both bursts, then the verification). Does
  // nothing when not started.
  void reannounce() override;
  // {"mac": the last announcement's source or null, "verification": toJson(verification())}
  nlohmann::json describe() const override;

  const Verification& verification() const { return verification_; }
  // The MAC the last announcement went out from (zero before the first).
  const MacAddress& mac() const { return mac_; }
  // Frames (gratuitous ARP, unsolicited NA) sent since this announcer was made.
  uint64_t framesSent() const { return frames_total_; }
  // The neighbours that answered the last verification with this director's MAC.
  size_t neighboursVerified() const;

 private:
  enum class Burst { kFirst, kSecond };

  void beginSchedule();
  void beginBurst(Burst b);
  void sendAnnouncement();
  void endBurst();
  void onRefresh();
  // Sends the frames of one announcement; counts them into sent_frames_ / failed_frames_.
  void announceOnce();
  bool ensureSendSocket();

  void beginVerification();
  void sendProbes();
  void onProbeReadable();
  void endVerification();
  void cancelVerification();

  config::Vip vip_;
  loop::Dispatcher& dispatcher_;
  PacketSocketOpener& opener_;
  LogSink log_;
  ForwardsIpv6 forwards_;
  NaRouter router_ = NaRouter::kClear;  // read at each start
  std::string name_;
  std::string context_;  // "vip=... dev=..."

  bool active_ = false;
  std::unique_ptr<PacketSocket> send_socket_;
  MacAddress mac_;
  loop::MonoTime started_at_;

  Burst burst_ = Burst::kFirst;
  int announced_ = 0;  // announcements sent in the current burst
  int sent_frames_ = 0;
  int failed_frames_ = 0;
  uint64_t frames_total_ = 0;
  std::string last_error_;
  std::unique_ptr<loop::Timer> burst_timer_;
  std::unique_ptr<loop::Timer> second_timer_;
  std::unique_ptr<loop::Timer> refresh_timer_;

  Verification verification_;
  std::unique_ptr<PacketSocket> probe_socket_;
  std::unique_ptr<loop::FdWatch> probe_watch_;
  std::unique_ptr<loop::Timer> probe_retry_timer_;
  std::unique_ptr<loop::Timer> verify_deadline_;
  loop::MonoTime probes_sent_at_;
};

}  // namespace tandem::resources::announce

namespace tandem::resources {

// The announcer for one [[vip]], for the chain right after that VIP's address resource. The
// opener is the daemon's announce::LinuxPacketSocketOpener (or a fake); it and dispatcher must
// outlive the resource. Keep the returned pointer's target reachable (e.g. a raw pointer taken
// before moving it into the chain) to call reannounce() and read verification() for status.
std::unique_ptr<announce::AnnounceResource> makeAnnounceResource(
    const config::Vip& vip, loop::Dispatcher& dispatcher, announce::PacketSocketOpener& opener,
    announce::LogSink log, announce::ForwardsIpv6 forwards = {});

}  // namespace tandem::resources
