#pragma once

#include "announce/packet_socket.h"

namespace tandem::resources::announce {

// AF_PACKET, SOCK_RAW, bound to the interface's ifindex, non-blocking and close-on-exec. Needs
// CAP_NET_RAW.
class LinuxPacketSocketOpener final : public PacketSocketOpener {
 public:
  [[nodiscard]] Result<std::unique_ptr<PacketSocket>> open(const std::string& interface,
                                                           uint16_t receive_ethertype) override;
};

}  // namespace tandem::resources::announce
