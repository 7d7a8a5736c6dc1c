#pragma once

#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "sync/sync_tap.h"

namespace tandem::fakes {

// The listener beside the backup daemon, without a socket: a test sees where it listens and
// hands it datagrams, as the group would.
class FakeSyncTaps {
 public:
  resources::sync::OpenSyncTap opener() {
    return [this](const resources::ipvs::SyncDaemon& backup,
                  resources::sync::OnSyncDatagram on_datagram)
               -> Result<std::unique_ptr<resources::sync::SyncTap>> {
      ++opens;
      if (fail_open) return fail(*fail_open);
      where = backup;
      on_datagram_ = std::move(on_datagram);
      return std::unique_ptr<resources::sync::SyncTap>(std::make_unique<Tap>(*this));
    };
  }
  bool listening() const { return open_; }
  // To the open tap, if any: false when none listens.
  bool deliver(std::vector<uint8_t> datagram, const IpAddress& from) {
    if (!open_) return false;
    on_datagram_(std::span<const uint8_t>(datagram), from);
    return true;
  }

  int opens = 0;
  std::optional<Error> fail_open;
  std::optional<resources::ipvs::SyncDaemon> where;  // of the last one opened

 private:
  class Tap final : public resources::sync::SyncTap {
   public:
    explicit Tap(FakeSyncTaps& taps) : taps_(taps) { taps_.open_ = true; }
    ~Tap() override { taps_.open_ = false; }
    Tap(const Tap&) = delete;
    Tap& operator=(const Tap&) = delete;

   private:
    FakeSyncTaps& taps_;
  };

  bool open_ = false;
  resources::sync::OnSyncDatagram on_datagram_;
};

// A version 1 sync message header for sync id, carrying conns connections, padded to size.
inline std::vector<uint8_t> syncMessageV1(uint8_t sync_id, uint8_t conns, uint16_t size = 8) {
  std::vector<uint8_t> m(size, 0);
  m[1] = sync_id;
  m[2] = static_cast<uint8_t>(size >> 8);
  m[3] = static_cast<uint8_t>(size & 0xff);
  m[4] = conns;
  m[5] = 1;
  return m;
}

}  // namespace tandem::fakes
