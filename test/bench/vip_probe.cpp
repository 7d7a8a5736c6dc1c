// vip_probe: the client side and the server side of the failover benchmark.
//
//   vip_probe serve --port 8080 --name d1
//       answers every TCP connection with "d1\n" and closes it (one process, no fork per
//       connection, so 100 connections a second cost nothing next to what is measured).
//   vip_probe probe --target 198.51.100.50:8080 --interval-ms 10 --timeout-ms 50 --out FILE
//       opens a new connection every interval; each attempt that is answered within the timeout
//       writes "START_MS END_MS ok NAME", each that is not "START_MS END_MS fail REASON" (epoch
//       ms, wall clock, so they compare with the daemons' log stamps). Runs until SIGTERM/SIGINT.
//
// A new connection per attempt is the point: it is what a new client sees, and it goes through
// the neighbour entry (ARP) of the VIP at that moment.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_endpoint.h"

namespace {

volatile sig_atomic_t g_stop = 0;
void onSignal(int) { g_stop = 1; }

int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
int64_t monoMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "vip_probe: %s\n"
               "usage: vip_probe serve --port PORT --name NAME\n"
               "       vip_probe probe --target ADDR:PORT [--interval-ms 10] [--timeout-ms 50] "
               "--out FILE\n",
               why);
  std::exit(2);
}

using tandem::bench::parseEndpoint;

int serve(int port, const std::string& name) {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return std::perror("socket"), 1;
  int one = 1;
  int zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  // The VIP arrives after the server starts: bind the wildcard, and let the kernel accept for
  // whatever address the node holds at the moment.
  sockaddr_in6 any{};
  any.sin6_family = AF_INET6;
  any.sin6_addr = in6addr_any;
  any.sin6_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0) {
    return std::perror("bind"), 1;
  }
  if (listen(fd, 512) != 0) return std::perror("listen"), 1;
  std::string reply = name + "\n";
  while (!g_stop) {
    int c = accept(fd, nullptr, nullptr);
    if (c < 0) {
      if (errno == EINTR) continue;
      std::perror("accept");
      continue;
    }
    ssize_t ignored = write(c, reply.data(), reply.size());
    (void)ignored;
    close(c);
  }
  close(fd);
  return 0;
}

struct Attempt {
  int fd = -1;
  int64_t start_wall = 0;
  int64_t start_mono = 0;
  bool connected = false;
  std::string got;
};

int probe(const sockaddr_storage& target, socklen_t len, int interval_ms, int timeout_ms,
          const std::string& out_path) {
  FILE* out = std::fopen(out_path.c_str(), "w");
  if (out == nullptr) return std::perror(out_path.c_str()), 1;
  std::setvbuf(out, nullptr, _IOLBF, 0);
  std::vector<Attempt> live;
  int64_t next = monoMs();
  auto finish = [&](Attempt& a, const char* outcome, const std::string& detail) {
    std::fprintf(out, "%lld %lld %s %s\n", static_cast<long long>(a.start_wall),
                 static_cast<long long>(wallMs()), outcome, detail.c_str());
    close(a.fd);
    a.fd = -1;
  };
  while (!g_stop) {
    int64_t now = monoMs();
    if (now >= next) {
      next += interval_ms;
      if (next < now) next = now + interval_ms;  // never burst to catch up after a stall
      Attempt a;
      a.fd = socket(target.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
      a.start_wall = wallMs();
      a.start_mono = now;
      if (a.fd < 0) {
        std::fprintf(out, "%lld %lld fail socket:%s\n", static_cast<long long>(a.start_wall),
                     static_cast<long long>(a.start_wall), std::strerror(errno));
      } else {
        // RST on close: thousands of attempts must not pile up in TIME_WAIT.
        linger l{1, 0};
        setsockopt(a.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        int rc = connect(a.fd, reinterpret_cast<const sockaddr*>(&target), len);
        if (rc == 0 || errno == EINPROGRESS) {
          a.connected = rc == 0;
          live.push_back(std::move(a));
        } else {
          finish(a, "fail", std::string("connect:") + std::strerror(errno));
        }
      }
    }
    std::vector<pollfd> fds;
    for (auto& a : live) {
      fds.push_back({a.fd, static_cast<short>(a.connected ? POLLIN : POLLOUT), 0});
    }
    int wait = static_cast<int>(std::max<int64_t>(0, next - monoMs()));
    if (poll(fds.data(), fds.size(), wait) < 0 && errno != EINTR) {
      std::perror("poll");
      return 1;
    }
    now = monoMs();
    for (size_t i = 0; i < live.size(); ++i) {
      Attempt& a = live[i];
      if (fds[i].revents != 0) {
        if (!a.connected) {
          int err = 0;
          socklen_t elen = sizeof err;
          getsockopt(a.fd, SOL_SOCKET, SO_ERROR, &err, &elen);
          if (err != 0) {
            finish(a, "fail", std::string("connect:") + std::strerror(err));
            continue;
          }
          a.connected = true;
        } else {
          char buf[128];
          ssize_t n = read(a.fd, buf, sizeof buf);
          if (n > 0) {
            a.got.append(buf, static_cast<size_t>(n));
            auto nl = a.got.find('\n');
            if (nl != std::string::npos) {
              finish(a, "ok", a.got.substr(0, nl));
              continue;
            }
          } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            finish(a, "fail", n == 0 ? "closed" : std::string("read:") + std::strerror(errno));
            continue;
          }
        }
      }
      if (a.fd >= 0 && now - a.start_mono >= timeout_ms) finish(a, "fail", "timeout");
    }
    std::erase_if(live, [](const Attempt& a) { return a.fd < 0; });
  }
  for (auto& a : live) finish(a, "fail", "stopped");
  std::fclose(out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("a mode is required");
  std::string mode = argv[1];
  std::string name;
  std::string target;
  std::string out;
  int port = 0;
  int interval_ms = 10;
  int timeout_ms = 50;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    std::string value = argv[++i];
    if (arg == "--port") {
      port = std::atoi(value.c_str());
    } else if (arg == "--name") {
      name = value;
    } else if (arg == "--target") {
      target = value;
    } else if (arg == "--out") {
      out = value;
    } else if (arg == "--interval-ms") {
      interval_ms = std::atoi(value.c_str());
    } else if (arg == "--timeout-ms") {
      timeout_ms = std::atoi(value.c_str());
    } else {
      usage(("unknown option " + arg).c_str());
    }
  }
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  if (mode == "serve") {
    if (port < 1 || port > 65535 || name.empty()) usage("serve needs --port and --name");
    return serve(port, name);
  }
  if (mode == "probe") {
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (!parseEndpoint(target, ss, len)) usage("probe needs --target ADDR:PORT");
    if (out.empty() || interval_ms < 1 || timeout_ms < 1) usage("probe needs --out");
    return probe(ss, len, interval_ms, timeout_ms, out);
  }
  usage(("unknown mode " + mode).c_str());
}
