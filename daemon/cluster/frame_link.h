#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/ip_address.h"

namespace tandem::cluster {

// The fast heartbeat path as the node sees it: signed frames straight to each peer, every
// heartbeat_interval. Production sends them over UDP (udp_link.h); tests over a fake network.
class FrameLink {
 public:
  using OnFrame = std::function<void(std::span<const uint8_t> frame, const IpAddress& from)>;

  virtual ~FrameLink() = default;
  // Where frames go; a reload may change it.
  virtual void setPeers(std::vector<Endpoint> peers) = 0;
  // Sends to every peer. A peer that cannot be reached now (no route, link down) is counted,
  // not fatal: that is what the heartbeat is there to find out.
  virtual void send(std::span<const uint8_t> frame) = 0;
  virtual uint64_t sendErrors() const = 0;
  virtual uint16_t port() const = 0;
  // Delivers, before it returns and without blocking, the frames that have already arrived but
  // not been read. The node calls it before it judges a peer silent: a loop that fell behind
  // (its CPU starved, a timer run before the socket's turn) judges what arrived, not what it
  // got round to reading.
  virtual void drain() = 0;
};

}  // namespace tandem::cluster
