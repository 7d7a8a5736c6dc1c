#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "announce/packet_socket.h"
#include "loop/dispatcher.h"

namespace tandem::fakes {

// Packet sockets without a kernel: every frame sent is journalled with the simulated time it
// left, and a test queues the frames a socket receives (then fires its fd on the
// SimDispatcher). Opening can be made to fail.
class FakePacketSocketOpener final : public resources::announce::PacketSocketOpener {
 public:
  struct Sent {
    loop::MonoTime at;
    uint16_t socket_ethertype;  // what the sending socket was opened for (0: send only)
    resources::announce::Frame frame;
  };

  class Socket final : public resources::announce::PacketSocket {
   public:
    Socket(FakePacketSocketOpener& owner, int fd, uint16_t ethertype)
        : owner_(owner), fd_(fd), ethertype_(ethertype) {
      ++owner_.open_now_;
    }
    ~Socket() override {
      --owner_.open_now_;
      if (owner_.receiver_ == this) owner_.receiver_ = nullptr;
    }
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;

    const resources::announce::MacAddress& mac() const override { return owner_.mac; }
    Result<void> send(resources::announce::FrameView frame) override {
      if (owner_.fail_sends) return fail(ErrorCode::kIo, "send on eth0: No buffer space");
      owner_.sent.push_back(Sent{owner_.dispatcher_.now(), ethertype_,
                                 resources::announce::Frame(frame.begin(), frame.end())});
      return {};
    }
    int fd() const override { return fd_; }
    Result<std::optional<resources::announce::Frame>> receive() override {
      if (inbox.empty()) return std::optional<resources::announce::Frame>();
      auto f = std::move(inbox.front());
      inbox.pop_front();
      return std::optional<resources::announce::Frame>(std::move(f));
    }

    std::deque<resources::announce::Frame> inbox;

   private:
    FakePacketSocketOpener& owner_;
    int fd_;
    uint16_t ethertype_;
  };

  explicit FakePacketSocketOpener(loop::Dispatcher& dispatcher) : dispatcher_(dispatcher) {}

  Result<std::unique_ptr<resources::announce::PacketSocket>> open(const std::string& interface,
                                                                  uint16_t ethertype) override {
    opens.push_back(interface + "/" + std::to_string(ethertype));
    if (fail_opens) return fail(ErrorCode::kNotFound, "interface " + interface + " does not exist");
    auto s = std::make_unique<Socket>(*this, next_fd_++, ethertype);
    if (ethertype != 0) receiver_ = s.get();
    return std::unique_ptr<resources::announce::PacketSocket>(std::move(s));
  }

  // The socket opened to receive (the probe socket), if one is open.
  Socket* receiver() const { return receiver_; }
  int openSockets() const { return open_now_; }

  resources::announce::MacAddress mac{{0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}};
  bool fail_opens = false;
  bool fail_sends = false;
  std::vector<std::string> opens;  // "eth0/0", "eth0/2054", ...
  std::vector<Sent> sent;

 private:
  loop::Dispatcher& dispatcher_;
  int next_fd_ = 100;
  int open_now_ = 0;
  Socket* receiver_ = nullptr;
};

}  // namespace tandem::fakes
