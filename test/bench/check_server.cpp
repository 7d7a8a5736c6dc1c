// check_server: the real servers of the health-check benchmark (test/bench/health_bench), as
// one process: a listening socket per port on 0.0.0.0, so that one socket answers for every
// address of 127.0.0.0/8 (all of it is local on lo) and 10,000 "servers" need no alias.
//
//   check_server --port 8000 [--port 8001 ...] [--http]
//
// Without --http each connection is accepted and closed at once (what a TCP check needs).
// With --http the request is read (up to the blank line, at most 4 KiB) and answered with
// "HTTP/1.0 200 OK" and a 3-byte body, then closed.
//
// Every second it prints "EPOCH_MS PORT=ACCEPTED ..." (accepted connections so far, per
// listening port, cumulative), so the benchmark counts the checks each checker really made
// from the server's side, whoever made them. Runs until SIGTERM/SIGINT. One thread, epoll:
// it must stay cheap next to the checkers it serves (its CPU is measured apart).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/epoll.h>
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
#include <string>
#include <unordered_map>
#include <vector>

namespace {

// Epoch milliseconds, as the benchmark's other clocks (bash's EPOCHREALTIME) read them.
int64_t epochMs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(
      stderr, "check_server: %s\nusage: check_server --port PORT [--port PORT...] [--http]\n", why);
  std::exit(2);
}

struct Listener {
  int fd = -1;
  int port = 0;
  uint64_t accepted = 0;
};

// An HTTP connection waiting for the end of its request.
struct Request {
  std::string head;
};

constexpr size_t kMaxRequest = 4096;
constexpr char kReply[] = "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n";

int listenOn(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  any.sin_port = htons(static_cast<uint16_t>(port));
  // A deep backlog: 10,000 checks a second arrive in bursts (many timers fire together).
  if (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0 || listen(fd, 65535) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Listener> listeners;
  bool http = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--port" && i + 1 < argc) {
      int p = std::atoi(argv[++i]);
      if (p < 1 || p > 65535) usage("bad port");
      listeners.push_back(Listener{-1, p, 0});
    } else if (a == "--http") {
      http = true;
    } else {
      usage(("unknown argument " + a).c_str());
    }
  }
  if (listeners.empty()) usage("no --port");
  signal(SIGPIPE, SIG_IGN);
  // SIGTERM/SIGINT through the epoll set: the loop ends cleanly between two events.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  int sfd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
  if (sfd < 0) return std::perror("signalfd"), 1;

  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return std::perror("epoll_create1"), 1;
  // epoll data: a listener's index, or (for HTTP requests) the connection's fd + the offset.
  const uint64_t kConnTag = 1ULL << 32;
  for (size_t i = 0; i < listeners.size(); ++i) {
    listeners[i].fd = listenOn(listeners[i].port);
    if (listeners[i].fd < 0) {
      std::fprintf(stderr, "check_server: cannot listen on port %d: %s\n", listeners[i].port,
                   std::strerror(errno));
      return 1;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, listeners[i].fd, &ev);
  }
  const uint64_t kStopTag = 1ULL << 33;
  {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kStopTag;
    epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
  }
  std::unordered_map<int, Request> requests;
  auto finish = [&](int fd) {
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    requests.erase(fd);
  };
  auto readRequest = [&](int fd) {
    char buf[2048];
    Request& r = requests[fd];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        r.head.append(buf, static_cast<size_t>(n));
        if (r.head.find("\r\n\r\n") != std::string::npos || r.head.size() >= kMaxRequest) {
          // The whole request is read, so close() sends a FIN, not a reset that could
          // overtake the reply.
          (void)!write(fd, kReply, sizeof kReply - 1);
          finish(fd);
          return;
        }
        continue;
      }
      if (n < 0 && errno == EAGAIN) return;
      finish(fd);  // closed early or an error
      return;
    }
  };

  std::printf("ready");
  for (const auto& l : listeners) std::printf(" %d", l.port);
  std::printf("\n");
  std::fflush(stdout);
  int64_t next_report = epochMs() + 1000;
  std::vector<epoll_event> events(256);
  bool stop = false;
  while (!stop) {
    int wait_ms = static_cast<int>(std::max<int64_t>(0, next_report - epochMs()));
    int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), wait_ms);
    if (n < 0 && errno != EINTR) return std::perror("epoll_wait"), 1;
    for (int i = 0; i < n; ++i) {
      uint64_t tag = events[i].data.u64;
      if (tag == kStopTag) {
        stop = true;
        break;
      }
      if (tag & kConnTag) {
        readRequest(static_cast<int>(tag & 0xffffffffULL));
        continue;
      }
      Listener& l = listeners[tag];
      for (;;) {
        int c = accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) break;  // EAGAIN, or a connection reset before it was accepted
        ++l.accepted;
        if (!http) {
          close(c);
          continue;
        }
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = kConnTag | static_cast<uint32_t>(c);
        epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
        readRequest(c);  // the request is often there already
      }
    }
    int64_t now = epochMs();
    if (now >= next_report) {
      std::printf("%lld", static_cast<long long>(now));
      for (const auto& l : listeners) {
        std::printf(" %d=%llu", l.port, static_cast<unsigned long long>(l.accepted));
      }
      std::printf("\n");
      std::fflush(stdout);
      next_report += 1000;
      if (next_report <= now) next_report = now + 1000;
    }
  }
  return 0;
}
