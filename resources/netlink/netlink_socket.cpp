#include "netlink/netlink_socket.h"

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace tandem::resources::netlink {
namespace {

// Dump replies are sized to the receive buffer (at least a page).
constexpr size_t kReceiveBuffer = 65536;
// At most this many datagrams are read per wake-up, and no more once the replies read so far
// (with what their completions did: a dump of the next service's destinations, the next
// requests of a plan) took kWakeBudget: a flood of replies is spread over loop iterations
// instead of holding the loop (the fd stays readable, so the loop comes back). Under the VM's
// emulation 32 dump round trips take 50-110 ms; natively the count is what stops.
constexpr int kReadsPerWake = 32;
constexpr std::chrono::milliseconds kWakeBudget{10};

}  // namespace

std::string inParens(const std::string& what) { return what.empty() ? "" : " (" + what + ")"; }

Result<Route> routeDatagram(std::span<const uint8_t> datagram) {
  if (datagram.size() < sizeof(nlmsghdr)) {
    return fail(ErrorCode::kParse, "a datagram shorter than a netlink header");
  }
  nlmsghdr h;
  std::memcpy(&h, datagram.data(), sizeof h);
  if (h.nlmsg_len < sizeof(nlmsghdr) || h.nlmsg_len > datagram.size()) {
    return fail(ErrorCode::kParse, "a netlink header whose length does not fit its datagram");
  }
  return Route{h.nlmsg_seq, h.nlmsg_pid};
}

Result<std::unique_ptr<NetlinkSocket>> NetlinkSocket::open(loop::Dispatcher& dispatcher,
                                                           int protocol, std::string name) {
  mnl_socket* nl = mnl_socket_open2(protocol, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (nl == nullptr) return fail(errnoError(errno, "cannot open a " + name + " socket"));
  if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
    int err = errno;
    mnl_socket_close(nl);
    return fail(errnoError(err, "cannot bind the " + name + " socket"));
  }
  // The kernel's own words in error acks, and acks that do not echo the whole request.
  int on = 1;
  (void)mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &on, sizeof(on));
  (void)mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &on, sizeof(on));
  std::unique_ptr<NetlinkSocket> s(new NetlinkSocket(dispatcher, nl, std::move(name)));
  auto watch = dispatcher.watchFd(mnl_socket_get_fd(nl), loop::FdEvents{true, false},
                                  [raw = s.get()](loop::FdEvents) { raw->onReadable(); });
  if (!watch) {
    return fail(watch.error().code,
                "cannot watch the " + s->name_ + " socket: " + watch.error().message);
  }
  s->watch_ = std::move(*watch);
  return s;
}

NetlinkSocket::NetlinkSocket(loop::Dispatcher& dispatcher, mnl_socket* nl, std::string name)
    : dispatcher_(dispatcher),
      nl_(nl),
      name_(std::move(name)),
      portid_(mnl_socket_get_portid(nl)),
      // Not 0: a reply with sequence number 0 is a notification, never an answer.
      seq_(static_cast<uint32_t>(dispatcher.now().time_since_epoch().count()) | 1u) {
  deadline_timer_ = dispatcher_.createTimer([this] { onDeadline(); });
  post_timer_ = dispatcher_.createTimer([this] { runPosted(); });
}

Result<void> NetlinkSocket::checkStrictly() {
  int on = 1;
  if (mnl_socket_setsockopt(nl_, NETLINK_GET_STRICT_CHK, &on, sizeof(on)) != 0) {
    return fail(errnoError(errno, "cannot ask the " + name_ + " socket for strict checking"));
  }
  return {};
}

NetlinkSocket::~NetlinkSocket() {
  *alive_ = false;
  watch_.reset();  // before the fd closes
  mnl_socket_close(nl_);
}

void NetlinkSocket::request(std::vector<uint8_t> bytes, uint32_t seq, std::string what,
                            Millis timeout, Decoder decoder, Completion done) {
  Pending p;
  p.what = std::move(what);
  p.timeout = timeout;
  p.decoder = std::move(decoder);
  p.done = std::move(done);
  if (bytes.size() >= sizeof(nlmsghdr)) {
    nlmsghdr h;
    std::memcpy(&h, bytes.data(), sizeof h);
    p.dump = (h.nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
  }
  if (!p.dump && corked_ > 0) {
    gather(bytes, seq, std::move(p));
    return;
  }
  flush();  // what was gathered goes first
  if (p.dump && dump_running_) {
    waiting_.push_back(Waiting{std::move(bytes), seq, std::move(p)});
    return;
  }
  send(std::move(bytes), seq, std::move(p));
}

void NetlinkSocket::send(std::vector<uint8_t> bytes, uint32_t seq, Pending p) {
  ++sends_;
  if (mnl_socket_sendto(nl_, bytes.data(), bytes.size()) < 0) {
    post(std::move(p.done),
         fail(errnoError(errno, "cannot send to the kernel" + inParens(p.what))));
    return;
  }
  sent(seq, std::move(p));
}

void NetlinkSocket::gather(const std::vector<uint8_t>& bytes, uint32_t seq, Pending p) {
  // Each message starts where the kernel looks for the next one: at NLMSG_ALIGN of the last.
  const size_t len = NLMSG_ALIGN(bytes.size());
  if (outbox_.size() == kBatchMessages || batch_.size() + len > kBatchBytes) flush();
  batch_.insert(batch_.end(), bytes.begin(), bytes.end());
  batch_.resize(batch_.size() + (len - bytes.size()), 0);
  outbox_.push_back(Gathered{seq, len, std::move(p)});
}

void NetlinkSocket::uncork() {
  if (corked_ > 0 && --corked_ == 0) flush();
}

void NetlinkSocket::flush() {
  if (outbox_.empty()) return;
  std::vector<Gathered> out = std::move(outbox_);
  outbox_.clear();
  ++sends_;
  const bool ok = mnl_socket_sendto(nl_, batch_.data(), batch_.size()) >= 0;
  const int err = errno;
  batch_.clear();
  for (auto& g : out) {
    if (ok) {
      sent(g.seq, std::move(g.p));
    } else {
      post(std::move(g.p.done),
           fail(errnoError(err, "cannot send to the kernel" + inParens(g.p.what))));
    }
  }
}

void NetlinkSocket::sent(uint32_t seq, Pending p) {
  if (p.dump) dump_running_ = true;
  p.deadline = dispatcher_.now() + p.timeout;
  const loop::MonoTime deadline = p.deadline;
  pending_[seq] = std::move(p);
  // The timer stays armed for the earliest deadline; a later one needs no re-arm (a first
  // apply sends 11,000 requests, each with the same timeout).
  if (!deadline_timer_->armed() || deadline < armed_for_) armDeadline();
}

void NetlinkSocket::post(Completion done, Result<void> result) {
  posted_.emplace_back(std::move(done), std::move(result));
  if (!post_timer_->armed()) post_timer_->arm(Millis(0));
}

void NetlinkSocket::runPosted() {
  auto posted = std::move(posted_);
  posted_.clear();
  std::weak_ptr<bool> alive = alive_;
  for (auto& [done, result] : posted) {
    if (alive.expired()) return;
    if (done) done(std::move(result));
  }
}

void NetlinkSocket::armDeadline() {
  if (pending_.empty()) {
    deadline_timer_->cancel();
    return;
  }
  loop::MonoTime first = pending_.begin()->second.deadline;
  for (const auto& [seq, p] : pending_) first = std::min(first, p.deadline);
  auto left = std::chrono::duration_cast<Millis>(first - dispatcher_.now());
  // Rounded up: a timer that fires a little early would find nothing due and re-arm at 0.
  if (first - dispatcher_.now() > left) left += Millis(1);
  deadline_timer_->arm(std::max(left, Millis(0)));
  armed_for_ = first;
}

void NetlinkSocket::onDeadline() {
  const loop::MonoTime now = dispatcher_.now();
  std::vector<uint32_t> due;
  for (const auto& [seq, p] : pending_) {
    if (p.deadline <= now) due.push_back(seq);
  }
  std::weak_ptr<bool> alive = alive_;
  for (uint32_t seq : due) {
    auto it = pending_.find(seq);
    if (it == pending_.end()) continue;
    const std::string what = it->second.what;
    const auto ms = it->second.timeout.count();
    complete(seq, fail(ErrorCode::kTimeout, "the kernel did not answer within " +
                                                std::to_string(ms) + " ms" + inParens(what)));
    if (alive.expired()) return;
  }
  armDeadline();
}

void NetlinkSocket::complete(uint32_t seq, Result<void> result) {
  auto it = pending_.find(seq);
  if (it == pending_.end()) return;
  Pending p = std::move(it->second);
  pending_.erase(it);
  if (p.dump) {
    dump_running_ = false;
    sendWaiting();
  }
  // Armed for an earlier deadline than the rest is harmless: onDeadline finds nothing due and
  // re-arms for the earliest left. Only an idle socket stops its timer.
  if (pending_.empty()) deadline_timer_->cancel();
  if (p.done) p.done(std::move(result));
}

void NetlinkSocket::sendWaiting() {
  if (waiting_.empty() || dump_running_) return;
  Waiting w = std::move(waiting_.front());
  waiting_.erase(waiting_.begin());
  send(std::move(w.bytes), w.seq, std::move(w.p));
}

void NetlinkSocket::onReadable() {
  // One buffer for the socket's life: zeroing 64 KiB per reply is a cost of its own under
  // emulation (the VM lab), paid once per request by a first apply of 11,000 rules.
  if (rx_.empty()) rx_.resize(kReceiveBuffer / sizeof(uint64_t));
  std::weak_ptr<bool> alive = alive_;
  // The requests the completions make go out together when the reading stops.
  struct Cork {
    NetlinkSocket& s;
    std::weak_ptr<bool> alive;
    explicit Cork(NetlinkSocket& socket) : s(socket), alive(socket.alive_) { s.cork(); }
    ~Cork() {
      if (!alive.expired()) s.uncork();
    }
    Cork(const Cork&) = delete;
    Cork& operator=(const Cork&) = delete;
  } cork(*this);
  const loop::MonoTime woke = dispatcher_.now();
  for (int i = 0; i < kReadsPerWake && dispatcher_.now() - woke < kWakeBudget; ++i) {
    ssize_t got = mnl_socket_recvfrom(nl_, rx_.data(), kReceiveBuffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (got < 0) {
      // ENOBUFS: the kernel dropped replies it could not queue. Which requests lost theirs is
      // not known, so every pending one fails (they would time out otherwise).
      const int err = errno;
      std::vector<uint32_t> seqs;
      for (const auto& [seq, p] : pending_) seqs.push_back(seq);
      for (uint32_t seq : seqs) {
        auto it = pending_.find(seq);
        if (it == pending_.end()) continue;
        complete(seq,
                 fail(errnoError(err, "cannot read from the kernel" + inParens(it->second.what))));
        if (alive.expired()) return;
      }
      if (err != ENOBUFS) return;
      continue;
    }
    const std::span<const uint8_t> datagram(reinterpret_cast<const uint8_t*>(rx_.data()),
                                            static_cast<size_t>(got));
    auto route = routeDatagram(datagram);
    if (!route) {
      ++dropped_;
      continue;
    }
    auto it = pending_.find(route->seq);
    // A late answer to a request that timed out, or not an answer to us at all.
    if (it == pending_.end() || (route->pid != 0 && route->pid != portid_)) {
      ++dropped_;
      continue;
    }
    auto r = it->second.decoder(datagram);
    if (!r) {
      complete(route->seq, fail(r.error()));
    } else if (*r) {
      complete(route->seq, {});
    }
    if (alive.expired()) return;
  }
}

Result<void> NetlinkSocket::exchangeNow(const std::vector<uint8_t>& bytes, uint32_t seq,
                                        const std::string& what, const Decoder& decoder) {
  flush();
  ++sends_;
  if (mnl_socket_sendto(nl_, bytes.data(), bytes.size()) < 0) {
    return fail(errnoError(errno, "cannot send to the kernel" + inParens(what)));
  }
  if (rx_.empty()) rx_.resize(kReceiveBuffer / sizeof(uint64_t));
  for (;;) {
    ssize_t got = mnl_socket_recvfrom(nl_, rx_.data(), kReceiveBuffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return fail(ErrorCode::kTimeout, "the kernel did not answer at once" + inParens(what));
    }
    if (got < 0) return fail(errnoError(errno, "cannot read from the kernel" + inParens(what)));
    const std::span<const uint8_t> datagram(reinterpret_cast<const uint8_t*>(rx_.data()),
                                            static_cast<size_t>(got));
    auto route = routeDatagram(datagram);
    if (!route || route->seq != seq || (route->pid != 0 && route->pid != portid_)) {
      ++dropped_;
      continue;
    }
    auto r = decoder(datagram);
    if (!r) return fail(r.error());
    if (*r) return {};
  }
}

}  // namespace tandem::resources::netlink
