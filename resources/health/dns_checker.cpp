#include "health/dns_checker.h"

#include <ares.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <utility>

#include "health/probe_socket.h"
#include "health/reasons.h"

namespace tandem::resources::health {

namespace {

constexpr int kClassIn = 1;

// c-ares's global state is made once, before the first channel. tandemd is single-threaded, so
// a function-local static is enough.
bool aresReady() {
  static const bool ready = ares_library_init(ARES_LIB_INIT_ALL) == ARES_SUCCESS;
  return ready;
}

// The query's id: unpredictable, so that only the server (or whoever sees the query) can answer
// it. ares_send sends the query as built, id and all.
uint16_t queryId() {
  uint16_t id = 0;
  if (::getrandom(&id, sizeof id, GRND_NONBLOCK) != sizeof id) {
    // No entropy yet (early boot): any id works for a health check, only less well against
    // forged replies.
    id = static_cast<uint16_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  return id;
}

bool transient(int err) {
  return err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == EINPROGRESS;
}

}  // namespace

struct DnsChecker::Ares {
  ares_channel channel = nullptr;
  uint16_t query_id = 0;
  // What the query's callback reported, and whether it came with a reply.
  std::optional<DnsVerdict> verdict;
  bool replied = false;
  // A datagram c-ares dropped that settles the probe anyway (judgeStrayDatagram).
  std::optional<DnsVerdict> stray;
  int ignored = 0;  // replies to another id
  int udp_fd = -1;
  // Why c-ares could not talk to the server, in the checker's words: c-ares itself only says
  // ARES_ECONNREFUSED for all of these.
  std::string socket_error;  // the probe socket could not be opened or bound
  int last_errno = 0;        // a send, connect or receive failed
  bool tcp_closed = false;   // the server closed the TCP connection of a retry
  std::string watch_error;   // a socket the loop could not watch
};

DnsChecker::DnsChecker(loop::Dispatcher& dispatcher)
    : dispatcher_(dispatcher), ares_(std::make_unique<Ares>()) {
  ares_timer_ = dispatcher_.createTimer([this] { drive(ARES_SOCKET_BAD, ARES_SOCKET_BAD); });
  deadline_ = dispatcher_.createTimer([this] {
    if (auto v = settled()) return finish(std::move(*v));
    finish({false, timedOut()});
  });
}

DnsChecker::~DnsChecker() {
  done_ = nullptr;
  endQuery();
}

// A channel of the probe's own, whose only server is the real server: nothing c-ares would read
// from the host. The reason it could not be made, if it could not.
std::optional<std::string> DnsChecker::openChannel(const ProbeTarget& target) {
  ares_options o{};
  // Every setting c-ares would otherwise take from /etc/resolv.conf, the environment
  // (LOCALDOMAIN, RES_OPTIONS) or the host name is given here, which is what keeps it from
  // reading them at all: no other server, no search domain, no host file, one try.
  // NOCHECKRESP: a SERVFAIL, NOTIMP or REFUSED reply is the answer to judge, not a reason to try
  // another server.
  o.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES | ARES_FLAG_NOCHECKRESP;
  o.timeout = static_cast<int>(target.check.timeout.count());
  o.tries = 1;
  o.ndots = 1;
  o.servers = nullptr;
  o.nservers = 0;  // the real server is set below, with its port and family
  o.domains = nullptr;
  o.ndomains = 0;
  o.lookups = const_cast<char*>("b");
  o.sortlist = nullptr;
  o.nsort = 0;
  o.sock_state_cb = [](void* self, ares_socket_t fd, int readable, int writable) {
    static_cast<DnsChecker*>(self)->watchSocket(fd, readable != 0, writable != 0);
  };
  o.sock_state_cb_data = this;
  const int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_NDOTS |
                   ARES_OPT_SERVERS | ARES_OPT_DOMAINS | ARES_OPT_LOOKUPS | ARES_OPT_SORTLIST |
                   ARES_OPT_SOCK_STATE_CB | ARES_OPT_NOROTATE;
  if (int rc = ares_init_options(&ares_->channel, &o, mask); rc != ARES_SUCCESS) {
    ares_->channel = nullptr;
    return std::string("cannot start c-ares: ") + ares_strerror(rc);
  }

  ares_addr_port_node server{};
  const IpAddress& a = target.address.address;
  server.family = a.family == Family::kInet ? AF_INET : AF_INET6;
  std::memcpy(a.family == Family::kInet ? static_cast<void*>(&server.addr.addr4)
                                        : static_cast<void*>(&server.addr.addr6),
              a.bytes.data(), a.family == Family::kInet ? 4 : 16);
  server.udp_port = target.address.port;
  server.tcp_port = target.address.port;
  if (int rc = ares_set_servers_ports(ares_->channel, &server); rc != ARES_SUCCESS) {
    endQuery();
    return std::string("cannot set the server: ") + ares_strerror(rc);
  }

  ares_set_socket_functions(ares_->channel, &socketFunctions(), this);
  return std::nullopt;
}

const ares_socket_functions& DnsChecker::socketFunctions() {
  // The sockets are the checker's: opened like every probe's (source_address; c-ares applies
  // its own ares_set_local_ip4/6 only to sockets it makes itself), and read here first, so that
  // what c-ares drops silently can still decide the probe. c-ares sets no option of its own on
  // them: they are non-blocking and close-on-exec from openProbeSocket.
  static constexpr ares_socket_functions kSockets = {
      // asocket
      [](int, int socket_type, int, void* self) -> ares_socket_t {
        auto& c = *static_cast<DnsChecker*>(self);
        std::string reason;
        int fd = openProbeSocket(c.target_, socket_type, reason);
        if (fd < 0) {
          c.ares_->socket_error = std::move(reason);
          return ARES_SOCKET_BAD;
        }
        if (socket_type == SOCK_DGRAM) c.ares_->udp_fd = fd;
        return fd;
      },
      // aclose
      [](ares_socket_t fd, void* self) -> int {
        auto& c = *static_cast<DnsChecker*>(self);
        if (fd == c.ares_->udp_fd) c.ares_->udp_fd = -1;
        return ::close(fd);
      },
      // aconnect
      [](ares_socket_t fd, const sockaddr* sa, ares_socklen_t len, void* self) -> int {
        int rc = ::connect(fd, sa, len);
        if (rc != 0 && !transient(errno)) static_cast<DnsChecker*>(self)->ares_->last_errno = errno;
        return rc;
      },
      // arecvfrom
      [](ares_socket_t fd, void* buf, size_t len, int flags, sockaddr* from,
         ares_socklen_t* from_len, void* self) -> ares_ssize_t {
        auto& c = *static_cast<DnsChecker*>(self);
        const ssize_t n = ::recvfrom(fd, buf, len, flags, from, from_len);
        if (n < 0) {
          if (!transient(errno)) c.ares_->last_errno = errno;
          return n;
        }
        if (fd != c.ares_->udp_fd) {
          if (n == 0) c.ares_->tcp_closed = true;
          return n;
        }
        const std::span<const uint8_t> datagram(static_cast<const uint8_t*>(buf),
                                                static_cast<size_t>(n));
        if (datagram.size() >= 12 && (datagram[0] << 8 | datagram[1]) != c.ares_->query_id) {
          ++c.ares_->ignored;
        } else if (!c.ares_->stray) {
          c.ares_->stray = judgeStrayDatagram(datagram, c.ares_->query_id, c.target_.check);
        }
        return n;
      },
      // asendv: MSG_NOSIGNAL, so a TCP retry to a server that closed never raises SIGPIPE
      [](ares_socket_t fd, const iovec* iov, int count, void* self) -> ares_ssize_t {
        msghdr m{};
        m.msg_iov = const_cast<iovec*>(iov);
        m.msg_iovlen = static_cast<size_t>(count);
        const ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
        if (n < 0 && !transient(errno)) static_cast<DnsChecker*>(self)->ares_->last_errno = errno;
        return n;
      },
  };
  return kSockets;
}

// The callback only records the outcome: c-ares is inside a call of its own when it calls
// back, and the channel may not be destroyed there. drive() and the deadline act on it.
void DnsChecker::onAnswer(void* self, int status, int, unsigned char* abuf, int alen) {
  // Cancelled or destroyed: the probe was abandoned, and reports nothing.
  if (status == ARES_ECANCELLED || status == ARES_EDESTRUCTION) return;
  auto& c = *static_cast<DnsChecker*>(self);
  auto& s = *c.ares_;
  const config::Check& check = c.target_.check;
  if (status == ARES_SUCCESS && abuf != nullptr) {
    s.replied = true;
    s.verdict = judgeDnsReply(std::span<const uint8_t>(abuf, static_cast<size_t>(alen)), check);
    return;
  }
  std::string reason;
  switch (status) {
    case ARES_ETIMEOUT:
      reason = c.timedOut();
      break;
    case ARES_ECONNREFUSED:  // what c-ares says for any failure to talk to the server
      if (!s.socket_error.empty()) {
        reason = s.socket_error;
      } else if (s.last_errno != 0) {
        reason = errnoReason(s.last_errno);
      } else if (s.tcp_closed) {
        reason = "closed without a reply";
      } else {
        reason = "connection refused";
      }
      break;
    case ARES_EBADRESP:
      reason = std::string("garbage reply: ") + ares_strerror(status);
      break;
    default:
      reason = std::string("c-ares: ") + ares_strerror(status);
  }
  s.verdict = DnsVerdict{false, std::move(reason)};
}

void DnsChecker::probe(const ProbeTarget& target, ProbeDone done) {
  cancel();
  done_ = std::move(done);
  target_ = target;
  started_ = dispatcher_.now();
  *ares_ = Ares{};
  // Everything c-ares decides before probe() returns (it opens the socket and sends from inside
  // ares_send) is delivered from the loop, at once.
  auto at_once = [this](std::string reason) {
    ares_->verdict = DnsVerdict{false, std::move(reason)};
    deadline_->arm(Millis(0));
  };
  const auto type = dnsTypeCode(target.check.query_type);
  if (!type) return at_once("unsupported query type " + target.check.query_type);
  if (!aresReady()) return at_once("cannot start c-ares");
  if (auto why = openChannel(target)) return at_once(std::move(*why));

  unsigned char* query = nullptr;
  int query_len = 0;
  ares_->query_id = queryId();
  if (int rc = ares_create_query(target.check.query_name.c_str(), kClassIn, *type, ares_->query_id,
                                 1, &query, &query_len, 0);
      rc != ARES_SUCCESS) {
    endQuery();
    return at_once("cannot ask for \"" + target.check.query_name + "\": " + ares_strerror(rc));
  }
  ares_send(ares_->channel, query, query_len, &DnsChecker::onAnswer, this);
  ares_free_string(query);
  if (!ares_->watch_error.empty() || ares_->verdict) {
    deadline_->arm(Millis(0));
    return;
  }
  deadline_->arm(target.check.timeout);
  armAresTimer();
}

void DnsChecker::cancel() {
  done_ = nullptr;
  endQuery();
  ares_timer_->cancel();
  deadline_->cancel();
}

void DnsChecker::watchSocket(int fd, bool readable, bool writable) {
  if (!readable && !writable) {
    watches_.erase(fd);  // c-ares closes the socket after this
    return;
  }
  const loop::FdEvents interest{readable, writable};
  if (auto it = watches_.find(fd); it != watches_.end()) {
    it->second->setInterest(interest);
    return;
  }
  auto watch = dispatcher_.watchFd(fd, interest, [this, fd](loop::FdEvents ready) {
    drive(ready.readable ? fd : ARES_SOCKET_BAD, ready.writable ? fd : ARES_SOCKET_BAD);
  });
  if (!watch) {
    ares_->watch_error = "cannot watch the socket: " + watch.error().message;
    return;
  }
  watches_.emplace(fd, std::move(*watch));
}

void DnsChecker::drive(int read_fd, int write_fd) {
  if (ares_->channel == nullptr) return;
  ares_process_fd(ares_->channel, read_fd, write_fd);
  if (auto v = settled()) return finish(std::move(*v));
  armAresTimer();
}

std::optional<DnsVerdict> DnsChecker::settled() {
  const Ares& s = *ares_;
  if (s.replied) return s.verdict;
  // Before c-ares's own verdict: an empty datagram is what c-ares calls "connection refused".
  if (s.stray) return s.stray;
  if (s.verdict) return s.verdict;
  if (!s.watch_error.empty()) return DnsVerdict{false, s.watch_error};
  return std::nullopt;
}

std::string DnsChecker::timedOut() const {
  std::string reason = timedOutReason(target_.check.timeout);
  // Replies that were not to this query (a late or forged one) are why a server that seemed to
  // answer still timed out.
  if (const int n = ares_->ignored; n > 0) {
    reason += " (ignored " + std::to_string(n) + (n == 1 ? " reply" : " replies") +
              " with another query id)";
  }
  return reason;
}

void DnsChecker::armAresTimer() {
  timeval tv{};
  if (ares_->channel == nullptr || ares_timeout(ares_->channel, nullptr, &tv) == nullptr) {
    ares_timer_->cancel();
    return;
  }
  // Rounded up: a timer that fires before c-ares's deadline finds nothing to do and re-arms.
  const int64_t ms = int64_t{tv.tv_sec} * 1000 + (tv.tv_usec + 999) / 1000;
  ares_timer_->arm(Millis(ms));
}

void DnsChecker::finish(DnsVerdict verdict) {
  endQuery();
  ares_timer_->cancel();
  deadline_->cancel();
  ProbeDone done = std::move(done_);
  done_ = nullptr;
  const auto took = std::chrono::duration_cast<Millis>(dispatcher_.now() - started_);
  if (done) done(ProbeResult{verdict.ok, std::move(verdict.reason), took});
}

void DnsChecker::endQuery() {
  if (ares_->channel != nullptr) {
    // Calls back a query still running with ARES_EDESTRUCTION (ignored), reports its sockets
    // removed and closes them.
    ares_destroy(ares_->channel);
    ares_->channel = nullptr;
  }
  watches_.clear();
}

}  // namespace tandem::resources::health
