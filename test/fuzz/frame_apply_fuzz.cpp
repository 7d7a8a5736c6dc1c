// libFuzzer target for the frame-apply path (issue 12): bytes through the FrameReceiver and, when
// accepted, into a ClusterCore (cluster::applyMessage, as ClusterNode does), interleaved with
// time passing, quorum, health and standby, the shell's resource and fence results answered as
// a shell would. Whatever the frames say, the core must not crash, hang or trip a sanitizer; its
// heartbeat must always encode; and it must never report ACTIVE without holding the resources it
// was told to start (the one claim a forged or reordered frame must never produce).
//
// Input: records, each an op byte then its operands. A frame record carries a 2-byte length and
// the frame; a frame that parses and names a key of the ring is re-signed with it, so that the
// fuzzer gets past the MAC into the replay, order and election logic. The seeds are the signed
// frames of corpus/wire (sender lb1, keys 1 and 2) wrapped in frame records.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "cluster/frame_apply.h"
#include "election/cluster_core.h"
#include "fuzz_keys.h"
#include "wire/frame.h"
#include "wire/heartbeat.h"
#include "wire/key_ring.h"
#include "wire/receiver.h"

namespace {

using namespace tandem;            // NOLINT: a fuzz target, one function
using namespace tandem::election;  // NOLINT

const auto& ring = tandem::fuzz::testRing;

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  ByteView bytes(size_t n) {
    n = std::min(n, size_ - at_);
    ByteView out(data_ + at_, n);
    at_ += n;
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// The shell's side: resources start and stop, fences run, as the core asks.
class Shell {
 public:
  explicit Shell(bool held) : held_(held) {}
  void carryOut(ClusterCore& core, Time now, Actions actions, bool fence_ok) {
    std::deque<Action> todo(actions.begin(), actions.end());
    for (int steps = 0; !todo.empty(); ++steps) {
      if (steps > 256) __builtin_trap();  // the core and the shell chasing each other forever
      Action a = todo.front();
      todo.pop_front();
      Actions next;
      switch (a.kind) {
        case Action::Kind::kStartResources:
          held_ = true;
          next = core.onResourcesStarted(now);
          break;
        case Action::Kind::kStopResources:
          held_ = false;
          next = core.onResourcesStopped(now);
          break;
        case Action::Kind::kRunFence:
          next = core.onFenceResult(now, fence_ok, fence_ok ? "fenced" : "fence failed");
          break;
        default:
          break;
      }
      todo.insert(todo.end(), next.begin(), next.end());
    }
  }
  bool held() const { return held_; }

 private:
  bool held_;
};

void check(const ClusterCore& core, const Shell& shell, Time now) {
  if (static_cast<size_t>(core.role()) >= kRoleCount) __builtin_trap();
  if (core.role() == Role::kActive && !shell.held()) __builtin_trap();
  (void)core.status(now);
  if (!wire::encodeHeartbeat(core.heartbeat())) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const uint8_t setup = in.byte();
  CoreConfig cfg;
  cfg.self = "lb2";
  cfg.priority = 100 + (setup & 0x0f) * 10;
  cfg.peers = {{"lb1", 150}, {"lb3", 90}};
  cfg.policy.failback = static_cast<config::FailbackPolicy>((setup >> 4) % 3);
  cfg.fencing = (setup & 0x40) != 0;
  Startup startup;
  startup.was_active = (setup & 0x80) != 0;
  startup.resources_present = startup.was_active && (setup & 0x01) != 0;
  Time now{};
  ClusterCore core(cfg, now, startup);
  Shell shell(startup.resources_present);
  wire::FrameReceiver rx("web", wire::NodeSet{"lb1", "lb3"});

  for (int records = 0; !in.done() && records < 512; ++records) {
    const uint8_t op = in.byte();
    Actions out;
    switch (op % 8) {
      case 0:
      case 1:
      case 2:
      case 3: {
        const size_t len = static_cast<size_t>(in.byte()) << 8 | in.byte();
        const ByteView view = in.bytes(len);
        Bytes frame(view.begin(), view.end());
        ByteView raw(frame.data(), frame.size());
        Bytes resigned;
        wire::Checked<wire::Frame> f = wire::decodeFrame(raw);
        if (f && ring().contains(f->key_id) && frame.size() >= wire::kMacBytes) {
          resigned.assign(frame.begin(), frame.end() - wire::kMacBytes);
          Result<wire::Mac> mac = ring().mac(f->key_id, resigned);
          if (!mac) __builtin_trap();
          resigned.insert(resigned.end(), mac->begin(), mac->end());
          raw = ByteView(resigned.data(), resigned.size());
        }
        // The path: none (a test), the frame's own sender, or another node.
        std::optional<std::string> came_from;
        if (op & 0x10) came_from = f ? f->sender : std::string("lb1");
        if (op & 0x20) came_from = "lb3";
        wire::Checked<wire::Message> m = rx.receive(raw, ring(), came_from);
        if (m) out = cluster::applyMessage(core, now, *m);
        break;
      }
      case 4:
        now += std::chrono::milliseconds(10 * in.byte());
        out = core.onTick(now);
        break;
      case 5:
        out = core.onQuorum(now, (op & 0x10) != 0);
        break;
      case 6:
        out = core.onLocalHealth(now, in.byte() * 4 % 1001, (op & 0x10) != 0);
        break;
      case 7:
        out = core.onStandby(now, (op & 0x10) != 0);
        break;
    }
    shell.carryOut(core, now, std::move(out), (op & 0x40) == 0);
    check(core, shell, now);
  }
  return 0;
}
