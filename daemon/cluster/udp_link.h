#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cluster/frame_link.h"
#include "common/ip_address.h"
#include "common/result.h"
#include "loop/dispatcher.h"

namespace tandem::cluster {

// The fast heartbeat path: signed frames straight to each peer over UDP, every
// heartbeat_interval. Corosync carries the same frames more slowly (a CPG message costs its
// totem ring far more than a datagram costs the kernel), so liveness does not depend on the
// ring and a ring stall alone cannot look like a dead peer.
class UdpLink final : public FrameLink {
 public:
  // Binds [::]:port (dual stack) and watches it on the dispatcher.
  [[nodiscard]] static Result<std::unique_ptr<UdpLink>> open(loop::Dispatcher& dispatcher,
                                                             uint16_t port, OnFrame on_frame);
  ~UdpLink() override;
  UdpLink(const UdpLink&) = delete;
  UdpLink& operator=(const UdpLink&) = delete;

  void setPeers(std::vector<Endpoint> peers) override { peers_ = std::move(peers); }
  void send(std::span<const uint8_t> frame) override;
  void drain() override { readAll(); }
  uint64_t sendErrors() const override { return send_errors_; }
  uint16_t port() const override { return port_; }

 private:
  UdpLink(int fd, uint16_t port, OnFrame on_frame)
      : fd_(fd), port_(port), on_frame_(std::move(on_frame)) {}
  void readAll();

  int fd_;
  uint16_t port_;
  OnFrame on_frame_;
  std::unique_ptr<loop::FdWatch> watch_;
  std::vector<Endpoint> peers_;
  uint64_t send_errors_ = 0;
};

}  // namespace tandem::cluster
