#pragma once

#include <memory>

#include "loop/dispatcher.h"
#include "ping/echo_transport.h"

namespace tandem::ping {

// Echo requests over raw ICMP and ICMPv6 sockets (one per family in use), non-blocking, read
// from the dispatcher.
//
// Raw rather than ping sockets (SOCK_DGRAM/IPPROTO_ICMP): those are allowed only to groups in
// net.ipv4.ping_group_range, which is "1 0" (nobody) in every new network namespace and on
// many hosts, while tandemd runs as root anyway (its VIPs and IPVS need CAP_NET_ADMIN), and
// CAP_NET_RAW opens raw sockets everywhere. The price is that a raw socket sees every echo reply
// to the host; a kernel filter (ICMP_FILTER, ICMP6_FILTER) passes only echo replies, and the
// pinger matches identifier, nonce, sequence and source.
class RawEchoTransport final : public EchoTransport {
 public:
  // Fails with a message naming the cause (CAP_NET_RAW missing, no IPv6 in the kernel).
  [[nodiscard]] static Result<std::unique_ptr<EchoTransport>> open(loop::Dispatcher& dispatcher,
                                                                   bool ipv4, bool ipv6,
                                                                   OnIcmp on_icmp);
  ~RawEchoTransport() override;
  RawEchoTransport(const RawEchoTransport&) = delete;
  RawEchoTransport& operator=(const RawEchoTransport&) = delete;

  Result<void> send(const IpAddress& to, std::span<const uint8_t> icmp) override;

 private:
  explicit RawEchoTransport(OnIcmp on_icmp) : on_icmp_(std::move(on_icmp)) {}
  void readAll(Family family);

  OnIcmp on_icmp_;
  int fd4_ = -1;
  int fd6_ = -1;
  std::unique_ptr<loop::FdWatch> watch4_;
  std::unique_ptr<loop::FdWatch> watch6_;
};

}  // namespace tandem::ping
