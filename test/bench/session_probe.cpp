// session_probe: the client and the server of the session-survival test (issue 11, connection
// sync). Long-lived TCP sessions through a VIP must keep exchanging lines while the director
// fails over, because the new director's IPVS already holds their connections (sync daemon).
//
//   session_probe echo --port P [--name NAME] [--corrupt-after K]
//       One process, one epoll loop, any number of connections. Every line is answered with
//       "NAME LINE" (NAME defaults to the host name), so the client sees which real server holds
//       its session. --port 0 lets the kernel choose; the port is printed on stdout as
//       "session_probe echo: listening on port P as NAME". A peer that sends more than 4 KiB
//       without a newline is disconnected (and named on stderr). With --corrupt-after K every
//       line after the K-th of a connection is answered "NAME garbage" (the probe's own test).
//   session_probe run --target ADDR:PORT --sessions N [--interval-ms 100] --duration-s S
//       [--connect-timeout-ms 2000] [--source ADDR] [--report FILE] [--mark-file FILE]
//       [--drain-ms 2000] [--progress FILE]
//       Opens N sessions, one a millisecond and all within a second (each must connect within
//       the connect timeout; it is not retried), then sends "SEQ ID\n" on every session every
//       interval (SEQ from 1, ID the session's number from 0) and expects "NAME SEQ ID\n" back,
//       in order.
//       Stops after S seconds from its start, or at SIGTERM/SIGINT; --duration-s 0: only at
//       the signal (a test that ends its scenario on a condition of its own, never on a clock a
//       slow machine can outrun). Then it sends nothing more and waits up to --drain-ms (2000)
//       for the echoes still on their way. Prints to stderr "session_probe: C/N sessions
//       connected" once every session has connected or failed to. SIGUSR1 is a mark: it appends
//       the epoch ms to --mark-file (and stderr), the test script's "cut now".
//       --progress FILE: one line, rewritten (a new file renamed over it) within 100 ms of a
//       change and at once at a mark: "marks=K mark_ms=E open=O answered=A ended=D". K marks so
//       far (E the last one's epoch ms, 0 before the first); O sessions connected and still
//       alive; A of them have had an echo of a line sent after the last mark (before any
//       mark: any echo); D sessions over (reset, closed, silent, a bad echo, a failed connect).
//       A test polls it for "every session has exchanged a line since the takeover" (A = N)
//       or "every session answered or died since" (A + D = N).
//
// Definitions (durations on the monotonic clock; the epoch ms printed are wall clock, to be
// compared with the daemons' logs):
//   stall      of a line: from when it was queued for sending until its echo arrived. Lines
//              keep being sent during a stall; a stall is no loss if the echoes come in order.
//              A session's max stall is the largest over its lines, counting at the end the
//              age of the oldest line still unanswered.
//   gap        between consecutive echoes (the first from the connect, the last to the end).
//   alive      at the end: connected, the socket open, every echo right and in order, and no
//              line unanswered for more than 3 x interval. An open session whose oldest
//              unanswered line is older than that is "silent" (its peer stopped answering).
//   bad echo   an echo that is not "NAME SEQ ID" with the next SEQ and this session's ID, an
//              echo nobody asked for, or 4 KiB without a newline. The first one is kept in
//              the report and the session is closed (its stream can no longer be checked).
//   moved      the session saw more than one NAME: another real server answered it. Reported;
//              it fails the run only through the bad echo or loss that comes with it.
//
// Output: a table and these key=value lines on stdout:
//   sessions connected connect_failed alive_at_end reset (ended by RST, FIN or a socket error)
//   silent bad_echo lost (= sessions - alive_at_end, for any reason) moved lines_sent
//   lines_echoed max_stall_ms p50_stall_ms p99_stall_ms (over the connected sessions' max
//   stalls, nearest rank) max_gap_ms first_failure_ms (epoch ms of the earliest failure: a
//   connect failure, a reset, a bad echo, or the send of a silent session's oldest unanswered
//   line; 0 if none) mark_ms (the last SIGUSR1, 0 if none) names (NAME:sessions,...)
//   stopped_by (signal: SIGTERM/SIGINT; duration: --duration-s ran out, and every session
//   ended then: a script that means to stop the run itself checks this).
// --report FILE gets a line per session: session= local= (its address:port, to find it in the
// IPVS connection table) state= (alive, silent, reset, closed, error, bad_echo, connect_failed)
// sent= echoed= max_stall_ms= max_gap_ms= names= end_ms= (epoch ms of the failure, 0 if alive)
// detail="..." (the errno text, or the first bad line). Exit 0 if every session is alive at
// the end, 1 otherwise, 2 on a usage error.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "bench_endpoint.h"

namespace {

constexpr size_t kMaxLine = 4096;         // longer without a newline is garbage, both ways
constexpr size_t kMaxUnsent = 64 * 1024;  // echo: stop reading a peer that does not read
constexpr size_t kMaxQueued = 1 << 20;    // run: a session's send queue (the kernel's is full)
// run: one new session a millisecond, all within a second: no SYN burst to overflow a backlog.
constexpr int64_t kOpenSpreadMs = 1000;
constexpr uint64_t kSignalKey = ~uint64_t{0};
constexpr uint32_t kIn = EPOLLIN;  // as plain numbers: EPOLLIN is an enumerator
constexpr uint32_t kOut = EPOLLOUT;
constexpr int64_t kProgressEveryMs = 100;  // run: the progress file, at most this stale
constexpr int64_t kMaxWaitMs = 1000;       // run: the longest epoll wait (there may be no end)

int64_t clockMs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}
int64_t monoMs() { return clockMs(CLOCK_MONOTONIC); }
int64_t epochMs() { return clockMs(CLOCK_REALTIME); }
long long ll(int64_t v) { return static_cast<long long>(v); }  // for printf, on every ABI
std::string errorText(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "session_probe: %s\n"
               "usage: session_probe echo --port P [--name NAME] [--corrupt-after K]\n"
               "       session_probe run --target ADDR:PORT --sessions N [--interval-ms 100]\n"
               "           --duration-s S (0: until SIGTERM) [--connect-timeout-ms 2000]\n"
               "           [--source ADDR] [--report FILE] [--mark-file FILE] [--drain-ms 2000]\n"
               "           [--progress FILE]\n",
               why.c_str());
  std::exit(2);
}

// SIGTERM, SIGINT and SIGUSR1 as epoll events: one that arrives between two waits is never lost.
int signalFd() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&set, s);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int readSignal(int sfd) {
  signalfd_siginfo si{};
  return read(sfd, &si, sizeof si) == sizeof si ? static_cast<int>(si.ssi_signo) : 0;
}

void watch(int ep, int op, int fd, uint32_t events, uint64_t key) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = key;
  if (epoll_ctl(ep, op, fd, &ev) != 0) std::perror("epoll_ctl");
}

std::string addressText(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  const auto* v4 = reinterpret_cast<const sockaddr_in*>(&ss);
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&ss);
  bool is_v4 = ss.ss_family == AF_INET;
  inet_ntop(ss.ss_family, is_v4 ? static_cast<const void*>(&v4->sin_addr) : &v6->sin6_addr, host,
            sizeof host);
  std::string port = std::to_string(ntohs(is_v4 ? v4->sin_port : v6->sin6_port));
  return is_v4 ? host + (":" + port) : "[" + std::string(host) + "]:" + port;
}

// A line from a peer, safe to print in a key=value report: printable, no quotes, bounded.
std::string printable(std::string_view s) {
  std::string out(s.substr(0, 120));
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e || c == '"') c = '?';
  }
  return out;
}

// One recv() appended to `in`: > 0 bytes, 0 at the end of the stream, -1 with errno set.
ssize_t recvSome(int fd, std::string& in) {
  char buf[16384];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof buf, 0)) < 0 && errno == EINTR) {
  }
  if (n > 0) in.append(buf, static_cast<size_t>(n));
  return n;
}

// Sends what the socket takes of `out`: 0, or the errno that ended the connection.
int sendSome(int fd, std::string& out) {
  while (!out.empty()) {
    ssize_t n = send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      out.erase(0, static_cast<size_t>(n));
    } else if (errno == EAGAIN) {
      return 0;
    } else if (errno != EINTR) {
      return errno;
    }
  }
  return 0;
}

// Hands each complete line of `in` (without its newline) to `f` and drops it; stops where `f`
// says false. False if it stopped or if what is left is longer than a line may be.
template <typename F>
bool eachLine(std::string& in, F f) {
  size_t start = 0;
  for (size_t nl; (nl = in.find('\n', start)) != std::string::npos; start = nl + 1) {
    if (!f(std::string_view(in).substr(start, nl - start))) return false;
  }
  in.erase(0, start);
  return in.size() <= kMaxLine;
}

// ---- echo ----

struct EchoConn {
  std::string in, out, peer;
  long lines = 0;
  uint32_t events = kIn;
};

// Reads what the peer sent, queues the answers and writes what the socket takes. False: drop it.
bool serveConn(int fd, EchoConn& k, const std::string& name, long corrupt_after) {
  while (k.out.size() < kMaxUnsent) {
    ssize_t n = recvSome(fd, k.in);
    if (n < 0 && errno == EAGAIN) break;
    if (n == 0) {
      // The client half-closed after its last line (socat, one request): answer what it sent
      // before that, as a server does, then close.
      sendSome(fd, k.out);
      return false;
    }
    if (n < 0) return false;  // an error: the session is over
    if (!eachLine(k.in, [&](std::string_view line) {
          if (corrupt_after >= 0 && ++k.lines > corrupt_after) line = "garbage";
          k.out.append(name).append(" ").append(line).append("\n");
          return true;
        })) {
      std::fprintf(stderr, "session_probe echo: %s sent %zu bytes without a newline; closing it\n",
                   k.peer.c_str(), k.in.size());
      return false;
    }
  }
  return sendSome(fd, k.out) == 0;
}

int echoServe(long port, const std::string& name, long corrupt_after) {
  // The VIP may arrive after the server starts: the wildcard, both families where there are.
  sockaddr_storage any{};
  socklen_t len = 0;
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  bool v6 = fd >= 0;
  int zero = 0;
  int one = 1;
  if (v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (!v6) fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  tandem::bench::parseAddress(v6 ? "::" : "0.0.0.0", static_cast<uint16_t>(port), any, len);
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&any), len) != 0 || listen(fd, 4096) != 0) {
    std::fprintf(stderr, "session_probe echo: port %ld: %s\n", port, std::strerror(errno));
    return 1;
  }
  getsockname(fd, reinterpret_cast<sockaddr*>(&any), &len);
  std::string bound = addressText(any);
  std::printf("session_probe echo: listening on port %s as %s\n",
              bound.substr(bound.rfind(':') + 1).c_str(), name.c_str());
  std::fflush(stdout);
  int sfd = signalFd();
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (sfd < 0 || ep < 0) return std::perror("session_probe echo"), 1;
  watch(ep, EPOLL_CTL_ADD, fd, kIn, static_cast<uint64_t>(fd));
  watch(ep, EPOLL_CTL_ADD, sfd, kIn, kSignalKey);
  std::unordered_map<int, EchoConn> conns;
  epoll_event events[256];
  for (;;) {
    int n = epoll_wait(ep, events, 256, -1);
    if (n < 0 && errno != EINTR) return std::perror("epoll_wait"), 1;
    for (int i = 0; i < n; ++i) {
      uint64_t key = events[i].data.u64;
      if (key == kSignalKey) {
        int signo = readSignal(sfd);
        if (signo == SIGTERM || signo == SIGINT) return 0;
      } else if (key == static_cast<uint64_t>(fd)) {
        sockaddr_storage peer{};
        socklen_t plen = sizeof peer;
        for (int c; (c = accept4(fd, reinterpret_cast<sockaddr*>(&peer), &plen,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;
             plen = sizeof peer) {
          conns[c] = EchoConn{{}, {}, addressText(peer)};
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // no echo waits for an ACK
          watch(ep, EPOLL_CTL_ADD, c, kIn, static_cast<uint64_t>(c));
        }
      } else if (auto it = conns.find(static_cast<int>(key)); it != conns.end()) {
        auto& [c, k] = *it;
        if (!serveConn(c, k, name, corrupt_after)) {
          close(c);
          conns.erase(it);
          continue;
        }
        uint32_t want = (k.out.size() < kMaxUnsent ? kIn : 0) | (k.out.empty() ? 0 : kOut);
        if (want != k.events) watch(ep, EPOLL_CTL_MOD, c, want, static_cast<uint64_t>(c));
        k.events = want;
      }
    }
  }
}

// ---- run ----

struct Options {
  sockaddr_storage target{}, source{};
  socklen_t target_len = 0, source_len = 0;
  long sessions = 0, interval_ms = 100, duration_s = -1, connect_timeout_ms = 2000;
  long drain_ms = 2000;  // after the end: no new lines, the answers still on their way awaited
  std::string report, mark_file, progress;
};

enum class End { kOpen, kConnectFailed, kReset, kClosed, kError, kBadEcho, kSilent };
const char* endName(End e) {
  static const char* const kNames[] = {"alive", "connect_failed", "reset", "closed",
                                       "error", "bad_echo",       "silent"};
  return kNames[static_cast<int>(e)];
}

// Every time here is monotonic ms but end_ms, the epoch ms of the failure.
struct Session {
  long id = 0;
  int fd = -1;
  bool started = false, connected = false;
  int64_t start_at = 0, deadline = 0, next_send = 0, last_echo = 0;  // deadline: of the connect
  // How many marks had come when the last line echoed was queued (-1: none echoed yet). Marks
  // and lines are ordered by the loop itself, not by a clock: a line queued in the same
  // millisecond as a mark but before it is not "after the mark".
  long answered_marks = -1;
  int64_t sent = 0, echoed = 0, max_stall = 0, max_gap = 0, end_ms = 0;
  struct Queued {
    int64_t at;  // when the line was queued
    long marks;  // the marks that had come by then
  };
  std::deque<Queued> waiting;  // each unanswered line
  std::string in, out, detail, local;
  uint32_t events = 0;
  End end = End::kOpen;
  std::set<std::string> names;
};

class Run {
 public:
  explicit Run(const Options& o) : o_(o), sessions_(static_cast<size_t>(o.sessions)) {}

  int run() {
    int sfd = signalFd();
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    if (sfd < 0 || ep_ < 0) return std::perror("session_probe"), 1;
    watch(ep_, EPOLL_CTL_ADD, sfd, kIn, kSignalKey);
    int64_t start = monoMs();
    // --duration-s 0: no end but the signal (INT64_MAX, never reached: the waits are capped).
    int64_t end = o_.duration_s > 0 ? start + o_.duration_s * 1000 : INT64_MAX;
    int64_t spread = std::min<int64_t>(kOpenSpreadMs, o_.sessions);
    for (size_t i = 0; i < sessions_.size(); ++i) {
      sessions_[i].id = static_cast<long>(i);
      sessions_[i].start_at = start + static_cast<int64_t>(i) * spread / o_.sessions;
    }
    std::vector<epoll_event> events(512);
    for (bool stop = false; !stop;) {
      int64_t now = monoMs();
      if (now >= end) break;
      if (now >= due_) {  // the O(N) walk only when some session is due
        due_ = end;
        for (Session& s : sessions_) due_ = std::min(due_, step(s, now));
      }
      if (!o_.progress.empty() && now >= progress_due_) {
        writeProgress();
        progress_due_ = now + kProgressEveryMs;
      }
      int64_t wake = std::min(due_, end);
      if (!o_.progress.empty()) wake = std::min(wake, progress_due_);
      int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()),
                         static_cast<int>(std::clamp<int64_t>(wake - monoMs(), 0, kMaxWaitMs)));
      if (n < 0 && errno != EINTR) return std::perror("epoll_wait"), 1;
      now = monoMs();
      for (int i = 0; i < n; ++i) {
        if (events[i].data.u64 != kSignalKey) {
          onEvent(sessions_[events[i].data.u64], events[i].events, now);
        } else if (int signo = readSignal(sfd); signo == SIGUSR1) {
          mark();
          progress_due_ = now;  // the reset count out at once: the test waits from the mark on
        } else if (signo != 0) {
          stop = stopped_by_signal_ = true;
        }
      }
    }
    drain(sfd);
    int64_t now = monoMs();
    int rc = summarize(now);
    if (!o_.progress.empty()) writeProgress();  // the final state, sessions judged at the end
    return rc;
  }

 private:
  void fail(Session& s, End why, const std::string& detail, int64_t at_ms = 0) {
    if (s.fd >= 0) close(s.fd);
    s.fd = -1;
    s.end = why;
    s.detail = detail;
    s.end_ms = at_ms != 0 ? at_ms : epochMs();
    if (!s.connected) settle();
  }

  // The end: no new line is sent, and the echoes still on their way get up to drain_ms to
  // arrive, so that a line sent just before the end under a loaded host is not a loss.
  void drain(int sfd) {
    const int64_t until = monoMs() + o_.drain_ms;
    std::vector<epoll_event> events(512);
    for (int64_t now = monoMs(); now < until; now = monoMs()) {
      bool waiting = false;
      for (const Session& s : sessions_) {
        waiting = waiting || (s.end == End::kOpen && s.connected && !s.waiting.empty());
      }
      if (!waiting) return;
      int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()),
                         static_cast<int>(until - now));
      if (n < 0 && errno != EINTR) return;
      now = monoMs();
      for (int i = 0; i < n; ++i) {
        if (events[i].data.u64 != kSignalKey) {
          onEvent(sessions_[events[i].data.u64], events[i].events, now);
        } else if (int signo = readSignal(sfd); signo != 0 && signo != SIGUSR1) {
          return;  // a second stop ends the wait
        }
      }
    }
  }

  // Tells the test script when every session has connected or failed to (it cuts after that).
  void settle() {
    if (++settled_ != o_.sessions) return;
    long connected = 0;
    for (const Session& s : sessions_) connected += s.connected;
    std::fprintf(stderr, "session_probe: %ld/%ld sessions connected\n", connected, o_.sessions);
  }

  void setEvents(Session& s, uint32_t events) {
    if (events != s.events) watch(ep_, EPOLL_CTL_MOD, s.fd, events, static_cast<uint64_t>(s.id));
    s.events = events;
  }

  void connect(Session& s, int64_t now) {
    s.started = true;
    s.deadline = now + o_.connect_timeout_ms;
    s.fd = socket(o_.target.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s.fd < 0) return fail(s, End::kConnectFailed, errorText("socket", errno));
    int one = 1;
    setsockopt(s.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // each line leaves at once
    if (o_.source_len != 0) {
      setsockopt(s.fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
      if (bind(s.fd, reinterpret_cast<const sockaddr*>(&o_.source), o_.source_len) != 0) {
        return fail(s, End::kConnectFailed, errorText("bind", errno));
      }
    }
    if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&o_.target), o_.target_len) != 0 &&
        errno != EINPROGRESS) {
      return fail(s, End::kConnectFailed, errorText("connect", errno));
    }
    s.events = kOut;
    watch(ep_, EPOLL_CTL_ADD, s.fd, s.events, static_cast<uint64_t>(s.id));
  }

  // Does what is due for the session; returns when it next needs the loop (INT64_MAX: never).
  int64_t step(Session& s, int64_t now) {
    if (!s.started && now >= s.start_at) connect(s, now);
    if (!s.started) return s.start_at;
    if (s.fd < 0) return INT64_MAX;
    if (!s.connected) {
      if (now < s.deadline) return s.deadline;
      fail(s, End::kConnectFailed, "connect: timed out");
      return INT64_MAX;
    }
    if (now >= s.next_send) {
      s.out += std::to_string(++s.sent) + " " + std::to_string(s.id) + "\n";
      s.waiting.push_back({now, marks_});
      // After a hiccup of the loop, one line now, not a burst to catch up.
      s.next_send = std::max(s.next_send + o_.interval_ms, now + 1);
      flush(s);
    }
    return s.fd < 0 ? INT64_MAX : s.next_send;
  }

  void flush(Session& s) {
    if (int err = sendSome(s.fd, s.out); err != 0) {
      return fail(s, err == ECONNRESET || err == EPIPE ? End::kReset : End::kError,
                  errorText("send", err));
    }
    if (s.out.size() > kMaxQueued) return fail(s, End::kError, "send queue full");
    setEvents(s, kIn | (s.out.empty() ? 0 : kOut));
  }

  void onEvent(Session& s, uint32_t events, int64_t now) {
    if (s.fd < 0) return;  // ended earlier in this batch
    if (!s.connected) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) return fail(s, End::kConnectFailed, errorText("connect", err));
      s.connected = true;
      s.last_echo = s.next_send = now;
      sockaddr_storage local{};
      socklen_t llen = sizeof local;
      getsockname(s.fd, reinterpret_cast<sockaddr*>(&local), &llen);
      s.local = addressText(local);
      settle();
      due_ = std::min(due_, step(s, now));  // the first line now
      return;
    }
    if (events & kOut) flush(s);
    while (s.fd >= 0 && (events & (kIn | EPOLLERR | EPOLLHUP))) {
      ssize_t n = recvSome(s.fd, s.in);
      if (n < 0 && errno == EAGAIN) return;
      if (n == 0) return fail(s, End::kClosed, "closed by the peer");
      if (n < 0) {
        return fail(s, errno == ECONNRESET ? End::kReset : End::kError, errorText("recv", errno));
      }
      if (!eachLine(s.in, [&](std::string_view line) { return checkEcho(s, line, now); }) &&
          s.fd >= 0) {
        fail(s, End::kBadEcho, std::to_string(s.in.size()) + " bytes without a newline");
      }
    }
  }

  bool checkEcho(Session& s, std::string_view line, int64_t now) {
    std::string want = " " + std::to_string(s.echoed + 1) + " " + std::to_string(s.id);
    if (s.waiting.empty() || line.size() <= want.size() || !line.ends_with(want)) {
      fail(s, End::kBadEcho, printable(line));
      return false;
    }
    s.names.emplace(line.substr(0, line.size() - want.size()));
    ++s.echoed;
    s.answered_marks = s.waiting.front().marks;
    s.max_stall = std::max(s.max_stall, now - s.waiting.front().at);
    s.max_gap = std::max(s.max_gap, now - s.last_echo);
    s.waiting.pop_front();
    s.last_echo = now;
    return true;
  }

  void mark() {
    ++marks_;
    mark_ms_ = epochMs();
    std::fprintf(stderr, "session_probe: mark %lld\n", ll(mark_ms_));
    if (o_.mark_file.empty()) return;
    if (FILE* f = std::fopen(o_.mark_file.c_str(), "a")) {
      std::fprintf(f, "%lld\n", ll(mark_ms_));
      std::fclose(f);
    } else {
      std::perror(o_.mark_file.c_str());
    }
  }

  // The progress line (see the top of the file), rewritten only when it changed: a new file
  // renamed over the old one, so that a reader never sees half a line.
  void writeProgress() {
    long open = 0, answered = 0, ended = 0;
    for (const Session& s : sessions_) {
      if (s.end != End::kOpen) {
        ++ended;
      } else if (s.connected) {
        ++open;
        answered += s.answered_marks >= marks_;
      }
    }
    std::string line = "marks=" + std::to_string(marks_) + " mark_ms=" + std::to_string(mark_ms_) +
                       " open=" + std::to_string(open) + " answered=" + std::to_string(answered) +
                       " ended=" + std::to_string(ended) + "\n";
    if (line == progress_line_) return;
    std::string tmp = o_.progress + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) return std::perror(tmp.c_str());
    bool ok = std::fputs(line.c_str(), f) >= 0;
    ok = std::fclose(f) == 0 && ok;
    if (!ok || std::rename(tmp.c_str(), o_.progress.c_str()) != 0) {
      return std::perror(o_.progress.c_str());
    }
    progress_line_ = line;
  }

  int summarize(int64_t now) {
    int64_t epoch_now = epochMs();
    long long connected = 0, alive = 0, reset = 0, silent = 0, bad = 0, moved = 0;
    long long sent = 0, echoed = 0, first_failure = 0;
    int64_t max_gap = 0;
    std::vector<int64_t> stalls;
    std::map<std::string, long> names;
    for (Session& s : sessions_) {
      if (s.end == End::kOpen && !s.connected) {
        fail(s, End::kConnectFailed, "connect: still pending at the end");
      }
      if (s.end == End::kOpen) {
        int64_t oldest = s.waiting.empty() ? now : s.waiting.front().at;
        s.max_stall = std::max(s.max_stall, now - oldest);
        s.max_gap = std::max(s.max_gap, now - s.last_echo);
        if (now - oldest > 3 * o_.interval_ms) {
          fail(s, End::kSilent, "no echo for " + std::to_string(now - oldest) + " ms",
               epoch_now - (now - oldest));
        }
      }
      if (s.fd >= 0) close(s.fd);
      connected += s.connected;
      alive += s.end == End::kOpen;
      reset += s.end == End::kReset || s.end == End::kClosed || s.end == End::kError;
      silent += s.end == End::kSilent;
      bad += s.end == End::kBadEcho;
      moved += s.names.size() > 1;
      sent += s.sent;
      echoed += s.echoed;
      max_gap = std::max(max_gap, s.max_gap);
      if (s.end != End::kOpen && (first_failure == 0 || s.end_ms < first_failure)) {
        first_failure = s.end_ms;
      }
      if (s.connected) stalls.push_back(s.max_stall);
      for (const auto& name : s.names) ++names[name];
    }
    std::sort(stalls.begin(), stalls.end());
    auto rank = [&](size_t pct) -> long long {  // nearest rank; 100 is the maximum
      return stalls.empty() ? 0 : stalls[std::max<size_t>((stalls.size() * pct + 99) / 100, 1) - 1];
    };
    // clang-format off
    const std::pair<const char*, long long> kv[] = {
        {"sessions", o_.sessions}, {"connected", connected},
        {"connect_failed", o_.sessions - connected}, {"alive_at_end", alive}, {"reset", reset},
        {"silent", silent}, {"bad_echo", bad}, {"lost", o_.sessions - alive}, {"moved", moved},
        {"lines_sent", sent}, {"lines_echoed", echoed}, {"max_stall_ms", rank(100)},
        {"p50_stall_ms", rank(50)}, {"p99_stall_ms", rank(99)}, {"max_gap_ms", max_gap},
        {"first_failure_ms", first_failure}, {"mark_ms", mark_ms_}};
    // clang-format on
    // The table: the counts and the stalls, each column as wide as its name.
    const size_t kTable[] = {0, 1, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14};
    for (size_t i : kTable) std::printf("%s%s", kv[i].first, i == 14 ? "\n" : " ");
    for (size_t i : kTable) {
      std::printf("%*lld%s", static_cast<int>(std::strlen(kv[i].first)), kv[i].second,
                  i == 14 ? "\n" : " ");
    }
    int shown = 0;
    for (const Session& s : sessions_) {
      if (s.end != End::kOpen && shown++ < 10) {
        std::printf("  session %ld: %s at %lld: %s\n", s.id, endName(s.end), ll(s.end_ms),
                    s.detail.c_str());
      }
    }
    for (const auto& [key, value] : kv) std::printf("%s=%lld\n", key, value);
    std::string list;
    for (const auto& [name, count] : names) {
      list += (list.empty() ? "" : ",") + name + ":" + std::to_string(count);
    }
    std::printf("names=%s\n", list.c_str());
    std::printf("stopped_by=%s\n", stopped_by_signal_ ? "signal" : "duration");
    if (!o_.report.empty()) {
      FILE* f = std::fopen(o_.report.c_str(), "w");
      if (f == nullptr) return std::perror(o_.report.c_str()), 1;
      for (const Session& s : sessions_) {
        std::string seen;
        for (const auto& name : s.names) seen += (seen.empty() ? "" : ",") + name;
        std::fprintf(f,
                     "session=%ld local=%s state=%s sent=%lld echoed=%lld max_stall_ms=%lld "
                     "max_gap_ms=%lld names=%s end_ms=%lld detail=\"%s\"\n",
                     s.id, s.local.empty() ? "-" : s.local.c_str(), endName(s.end), ll(s.sent),
                     ll(s.echoed), ll(s.max_stall), ll(s.max_gap),
                     seen.empty() ? "-" : seen.c_str(), ll(s.end == End::kOpen ? 0 : s.end_ms),
                     s.detail.c_str());
      }
      std::fclose(f);
    }
    return alive == o_.sessions ? 0 : 1;
  }

  const Options& o_;
  std::vector<Session> sessions_;
  int ep_ = -1;
  int64_t due_ = 0;   // when some session next needs the loop
  long settled_ = 0;  // sessions connected or failed to
  int64_t mark_ms_ = 0;
  long marks_ = 0;
  int64_t progress_due_ = 0;   // when the progress line is next brought up to date
  std::string progress_line_;  // what the progress file says
  bool stopped_by_signal_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("a mode is required (echo or run)");
  std::string mode = argv[1];
  Options o;
  std::string name, target, source;
  long port = -1;
  long corrupt_after = -1;
  const std::map<std::string, std::tuple<long*, long, long>> numbers = {
      {"echo --port", {&port, 0, 65535}},
      {"echo --corrupt-after", {&corrupt_after, 0, 1000000000}},
      {"run --sessions", {&o.sessions, 1, 100000}},
      {"run --interval-ms", {&o.interval_ms, 1, 60000}},
      {"run --duration-s", {&o.duration_s, 0, 86400}},
      {"run --connect-timeout-ms", {&o.connect_timeout_ms, 1, 600000}},
      {"run --drain-ms", {&o.drain_ms, 0, 600000}}};
  const std::map<std::string, std::string*> texts = {{"echo --name", &name},
                                                     {"run --target", &target},
                                                     {"run --source", &source},
                                                     {"run --report", &o.report},
                                                     {"run --mark-file", &o.mark_file},
                                                     {"run --progress", &o.progress}};
  for (int i = 2; i < argc; i += 2) {
    std::string arg = argv[i];
    if (i + 1 >= argc) usage("missing value after " + arg);
    std::string value = argv[i + 1];
    if (auto t = texts.find(mode + " " + arg); t != texts.end()) {
      *t->second = value;
    } else if (auto n = numbers.find(mode + " " + arg); n != numbers.end()) {
      auto [out, min, max] = n->second;
      char* end = nullptr;
      errno = 0;
      *out = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || *out < min || *out > max) {
        usage(arg + " wants a whole number from " + std::to_string(min) + " to " +
              std::to_string(max));
      }
    } else {
      usage("unknown option " + arg + " for " + mode);
    }
  }
  signal(SIGPIPE, SIG_IGN);
  // A thousand sessions need more descriptors than the usual soft limit of 1024.
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  if (mode == "echo") {
    if (port < 0) usage("echo needs --port");
    if (name.empty()) {
      char host[256] = "echo";
      gethostname(host, sizeof host - 1);
      name = host;
    }
    if (name.find_first_of(" \n") != std::string::npos) usage("--name takes no space");
    return echoServe(port, name, corrupt_after);
  }
  if (mode != "run") usage("unknown mode " + mode);
  if (!tandem::bench::parseEndpoint(target, o.target, o.target_len)) {
    usage("run needs --target ADDR:PORT");
  }
  if (o.sessions == 0 || o.duration_s < 0) {
    usage("run needs --sessions and --duration-s (0: until SIGTERM)");
  }
  if (!source.empty() && (!tandem::bench::parseAddress(source, 0, o.source, o.source_len) ||
                          o.source.ss_family != o.target.ss_family)) {
    usage("--source wants an address of the target's family");
  }
  return Run(o).run();
}
