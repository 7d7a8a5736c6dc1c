#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "loop/dispatcher.h"
#include "ping/echo_transport.h"
#include "ping/icmp_echo.h"

namespace tandem::fakes {

// A network for echo requests on simulated time: the target answers every request from a node
// that reaches it, after rtt, as a kernel would (type turned into a reply, IPv4 checksum
// redone); requests from a cut-off node vanish.
class FakeEchoNet {
 public:
  FakeEchoNet(loop::Dispatcher& dispatcher, Millis rtt) : dispatcher_(dispatcher), rtt_(rtt) {}

  void cut(const std::string& node) { cut_.insert(node); }
  void restore(const std::string& node) { cut_.erase(node); }
  bool reaches(const std::string& node) const { return cut_.count(node) == 0; }

  struct Sent {
    std::string node;
    IpAddress to;
    Bytes icmp;
  };
  const std::vector<Sent>& sent() const { return sent_; }

  // The transport of one node.
  ping::MakeEchoTransport transportFor(std::string node) {
    return [this, node](bool, bool,
                        ping::OnIcmp on_icmp) -> Result<std::unique_ptr<ping::EchoTransport>> {
      return std::unique_ptr<ping::EchoTransport>(
          std::make_unique<Transport>(*this, node, std::move(on_icmp)));
    };
  }

 private:
  class Transport final : public ping::EchoTransport {
   public:
    Transport(FakeEchoNet& net, std::string node, ping::OnIcmp on_icmp)
        : net_(net), node_(std::move(node)), on_icmp_(std::move(on_icmp)) {
      timer_ = net_.dispatcher_.createTimer([this] { deliver(); });
    }
    Result<void> send(const IpAddress& to, std::span<const uint8_t> icmp) override {
      Bytes msg(icmp.begin(), icmp.end());
      net_.sent_.push_back({node_, to, msg});
      if (!net_.reaches(node_)) return Result<void>();  // lost on the way
      msg[0] = to.family == Family::kInet ? ping::kEchoReplyV4 : ping::kEchoReplyV6;
      msg[2] = msg[3] = 0;
      if (to.family == Family::kInet) {
        uint16_t sum = internetChecksum(msg);
        msg[2] = static_cast<uint8_t>(sum >> 8);
        msg[3] = static_cast<uint8_t>(sum);
      }
      queue_.push_back({net_.dispatcher_.now() + net_.rtt_, to, std::move(msg)});
      if (!timer_->armed()) timer_->arm(net_.rtt_);
      return Result<void>();
    }

   private:
    struct InFlight {
      loop::MonoTime due;
      IpAddress from;
      Bytes icmp;
    };
    void deliver() {
      while (!queue_.empty() && queue_.front().due <= net_.dispatcher_.now()) {
        InFlight f = std::move(queue_.front());
        queue_.pop_front();
        on_icmp_(f.from, f.icmp);
      }
      if (!queue_.empty()) {
        timer_->arm(std::chrono::ceil<Millis>(queue_.front().due - net_.dispatcher_.now()));
      }
    }

    FakeEchoNet& net_;
    std::string node_;
    ping::OnIcmp on_icmp_;
    std::deque<InFlight> queue_;
    std::unique_ptr<loop::Timer> timer_;
  };

  loop::Dispatcher& dispatcher_;
  Millis rtt_;
  std::set<std::string> cut_;
  std::vector<Sent> sent_;
};

}  // namespace tandem::fakes
