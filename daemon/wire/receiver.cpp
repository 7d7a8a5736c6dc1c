#include "wire/receiver.h"

#include <utility>
#include <vector>

namespace tandem::wire {

namespace {

Checked<Body> decodeBody(FrameType type, ByteView payload) {
  switch (type) {
    case FrameType::kHeartbeat: {
      Checked<Heartbeat> hb = decodeHeartbeat(payload);
      if (!hb) return hb.error();
      return Body(std::move(hb).value());
    }
    case FrameType::kRelease: {
      Checked<Release> rel = decodeRelease(payload);
      if (!rel) return rel.error();
      return Body(std::move(rel).value());
    }
    case FrameType::kAdmin:
      return Body(Admin{});
  }
  return Rejection::kUnknownType;
}

}  // namespace

FrameReceiver::FrameReceiver(std::string cluster, NodeSet peers)
    : cluster_(std::move(cluster)), peers_(std::move(peers)) {}

Checked<Message> FrameReceiver::receive(ByteView bytes, const KeyRing& keys,
                                        const std::optional<std::string>& came_from) {
  Checked<Message> m = accept(bytes, keys, came_from);
  if (m) {
    ++counters_.accepted;
  } else {
    counters_.count(m.error());
  }
  return m;
}

Checked<Message> FrameReceiver::accept(ByteView bytes, const KeyRing& keys,
                                       const std::optional<std::string>& came_from) {
  Checked<Frame> f = verifyFrame(bytes, keys, cluster_, peers_);
  if (!f) return f.error();
  Checked<Body> body = decodeBody(f->type, f->payload);
  if (!body) return body.error();
  // Before the guard: a frame that names another node must not move that node's window.
  if (came_from && *came_from != f->sender) return Rejection::kSenderMismatch;
  if (auto r = guard_.admit(f->sender, f->incarnation, f->sequence)) return *r;
  const std::pair<uint64_t, uint64_t> order{f->incarnation, f->sequence};
  auto [it, first] = newest_.try_emplace(f->sender, order);
  if (!first) {
    if (order < it->second) return Rejection::kSuperseded;
    it->second = order;
  }
  return Message{std::move(f).value(), std::move(body).value()};
}

void FrameReceiver::setPeers(NodeSet peers) {
  std::vector<std::string> gone;
  for (const std::string& p : peers_) {
    if (!peers.contains(p)) gone.push_back(p);
  }
  for (const std::string& p : gone) {
    guard_.forget(p);
    newest_.erase(p);
  }
  peers_ = std::move(peers);
}

}  // namespace tandem::wire
