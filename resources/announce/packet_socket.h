#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "announce/frames.h"
#include "common/result.h"

// The one OS touchpoint of announcements: a raw Ethernet socket on one interface. A dumb pipe:
// frames are built and parsed by frames.h.
namespace tandem::resources::announce {

class PacketSocket {
 public:
  virtual ~PacketSocket() = default;

  // The interface's MAC, read when the socket was opened.
  virtual const MacAddress& mac() const = 0;
  // Sends one whole frame (Ethernet header included). Never blocks: a full queue is an error.
  [[nodiscard]] virtual Result<void> send(FrameView frame) = 0;
  // Readable when a frame waits, for loop::Dispatcher::watchFd. Only sockets opened with a
  // receive ethertype receive anything.
  virtual int fd() const = 0;
  // The next waiting frame, or nullopt when none waits. Never blocks.
  [[nodiscard]] virtual Result<std::optional<Frame>> receive() = 0;
};

class PacketSocketOpener {
 public:
  virtual ~PacketSocketOpener() = default;
  // Opens a socket on interface. receive_ethertype 0 opens it for sending only (nothing is
  // queued for it); otherwise frames of that ethertype arriving on the interface are received.
  // Fails with a message naming the interface: missing, not Ethernet, or not permitted.
  [[nodiscard]] virtual Result<std::unique_ptr<PacketSocket>> open(const std::string& interface,
                                                                   uint16_t receive_ethertype) = 0;
};

}  // namespace tandem::resources::announce
