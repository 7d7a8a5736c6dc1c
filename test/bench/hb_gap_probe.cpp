// hb_gap_probe: how evenly a director's UDP heartbeats arrive (issue 9's benchmark,
// test/vm/bench/heartbeat_bench).
//
//   hb_gap_probe --listen 198.51.100.100:5420 --from 198.51.100.11 [--duration-s 60]
//                [--threshold-ms 250] [--phase NAME]...
//
// Binds a UDP socket on --listen (give the config a [[node]] with this address, and the
// director sends its heartbeats here as to any peer) and records the arrival time
// (CLOCK_MONOTONIC) of every datagram from --from. It does not check the frames' HMAC: in the
// lab, heartbeats are the only datagrams to that port. It stops after --duration-s, or at SIGTERM
// or SIGINT, and prints the intervals between consecutive heartbeats: count, p50, p90, p99, max,
// how many exceed --threshold-ms, and a histogram. Each --phase names a window; SIGUSR1 starts
// the next one (an interval belongs to the window its later heartbeat arrived in), and the table
// has a row per window and one for the whole run.
//
// While it runs it prints "listening on ..." once bound and "first heartbeat after N ms" (since
// the start) at the first datagram from --from, so that a script can poll its log for both. At
// the end, after the table, one "phase=NAME key=value ..." line per row for scripts.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_endpoint.h"

namespace {

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_marks = 0;
void onStop(int) { g_stop = 1; }
void onMark(int) { g_marks = g_marks + 1; }

// A probe that is forgotten must not run (or grow) forever.
constexpr long kMaxDurationS = 3600;
constexpr size_t kMaxArrivals = 1'000'000;

// Histogram bucket upper bounds in ms (the last bucket is everything above the last bound).
constexpr std::array<double, 5> kBounds = {210, 250, 300, 500, 1000};
constexpr std::array<const char*, 6> kBucketNames = {"<210",    "210-250",  "250-300",
                                                     "300-500", "500-1000", ">1000"};

int64_t monoNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "hb_gap_probe: %s\n"
               "usage: hb_gap_probe --listen ADDR:PORT --from ADDR [--duration-s 60] "
               "[--threshold-ms 250] [--phase NAME]...\n",
               why);
  std::exit(2);
}

struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

bool parseAddress(const std::string& host, uint16_t port, Endpoint& out) {
  return tandem::bench::parseAddress(host, port, out.addr, out.len);
}
bool parseEndpoint(const std::string& text, Endpoint& out) {
  return tandem::bench::parseEndpoint(text, out.addr, out.len);
}

bool sameHost(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in&>(b).sin_addr.s_addr;
  }
  return std::memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
                     &reinterpret_cast<const sockaddr_in6&>(b).sin6_addr, sizeof(in6_addr)) == 0;
}

// The statistics: a pure function of the intervals.
struct Summary {
  size_t intervals = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
  size_t over = 0;
  std::array<size_t, kBucketNames.size()> buckets{};
};

// Nearest rank: the smallest interval that at least q of them do not exceed.
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(q * static_cast<double>(sorted.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

Summary summarize(std::vector<double> ms, double threshold_ms) {
  Summary s;
  std::sort(ms.begin(), ms.end());
  s.intervals = ms.size();
  s.p50 = percentile(ms, 0.50);
  s.p90 = percentile(ms, 0.90);
  s.p99 = percentile(ms, 0.99);
  s.max = ms.empty() ? 0 : ms.back();
  for (double v : ms) {
    if (v > threshold_ms) ++s.over;
    size_t b = 0;
    while (b < kBounds.size() && v >= kBounds[b]) ++b;
    ++s.buckets[b];
  }
  return s;
}

struct Arrival {
  int64_t ns;
  size_t phase;
};

void printTable(const std::vector<Arrival>& arrivals, const std::vector<std::string>& phases,
                double threshold_ms) {
  // Rows: each phase, then the whole run (when there is more than one phase).
  std::vector<std::vector<double>> per(phases.size());
  std::vector<size_t> beats(phases.size(), 0);
  std::vector<double> all;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    ++beats[arrivals[i].phase];
    if (i == 0) continue;
    double ms = static_cast<double>(arrivals[i].ns - arrivals[i - 1].ns) / 1e6;
    per[arrivals[i].phase].push_back(ms);
    all.push_back(ms);
  }
  struct Row {
    std::string name;
    size_t beats;
    Summary s;
  };
  std::vector<Row> rows;
  for (size_t p = 0; p < phases.size(); ++p) {
    rows.push_back({phases[p], beats[p], summarize(per[p], threshold_ms)});
  }
  if (phases.size() > 1) rows.push_back({"all", arrivals.size(), summarize(all, threshold_ms)});

  char over_head[32];
  std::snprintf(over_head, sizeof over_head, ">%.0fms", threshold_ms);
  std::printf("%-10s %6s %6s %8s %8s %8s %8s %7s |", "window", "beats", "gaps", "p50_ms", "p90_ms",
              "p99_ms", "max_ms", over_head);
  for (const char* b : kBucketNames) std::printf(" %8s", b);
  std::printf("\n");
  for (const Row& r : rows) {
    std::printf("%-10s %6zu %6zu %8.1f %8.1f %8.1f %8.1f %7zu |", r.name.c_str(), r.beats,
                r.s.intervals, r.s.p50, r.s.p90, r.s.p99, r.s.max, r.s.over);
    for (size_t n : r.s.buckets) std::printf(" %8zu", n);
    std::printf("\n");
  }
  for (const Row& r : rows) {
    std::printf(
        "phase=%s beats=%zu intervals=%zu p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f "
        "over=%zu\n",
        r.name.c_str(), r.beats, r.s.intervals, r.s.p50, r.s.p90, r.s.p99, r.s.max, r.s.over);
  }
}

int run(const Endpoint& listen, const Endpoint& from, long duration_s, double threshold_ms,
        const std::vector<std::string>& phases) {
  int fd = socket(listen.addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::perror("socket"), 1;
  if (bind(fd, reinterpret_cast<const sockaddr*>(&listen.addr), listen.len) != 0) {
    return std::perror("bind"), 1;
  }
  char host[INET6_ADDRSTRLEN] = "?";
  const void* a =
      listen.addr.ss_family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in&>(listen.addr).sin_addr)
          : &reinterpret_cast<const sockaddr_in6&>(listen.addr).sin6_addr;
  inet_ntop(listen.addr.ss_family, a, host, sizeof host);
  std::printf("listening on %s port %u for %ld s\n", host,
              ntohs(reinterpret_cast<const sockaddr_in&>(listen.addr).sin_port), duration_s);

  // The signals are blocked except inside ppoll, so none is lost between a check and the wait.
  sigset_t blocked;
  sigset_t waiting;
  sigemptyset(&blocked);
  for (int s : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&blocked, s);
  sigprocmask(SIG_BLOCK, &blocked, &waiting);

  const int64_t start = monoNs();
  const int64_t deadline = start + duration_s * 1'000'000'000LL;
  std::vector<Arrival> arrivals;
  arrivals.reserve(4096);
  size_t ignored = 0;
  size_t phase = 0;
  int marks_seen = 0;
  bool stopped = false;
  while (!g_stop) {
    if (g_marks != marks_seen) {
      marks_seen = g_marks;
      phase = std::min(static_cast<size_t>(marks_seen), phases.size() - 1);
    }
    int64_t now = monoNs();
    if (now >= deadline) break;
    int64_t left = deadline - now;
    timespec ts{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
    pollfd p{fd, POLLIN, 0};
    int rc = ppoll(&p, 1, &ts, &waiting);
    if (rc < 0) {
      if (errno == EINTR) continue;
      std::perror("ppoll");
      return 1;
    }
    if (rc == 0) continue;
    // Drain what is queued; each datagram is stamped as it is read.
    for (;;) {
      char buf[2048];
      sockaddr_storage src{};
      socklen_t slen = sizeof src;
      ssize_t n =
          recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&src), &slen);
      if (n < 0) break;
      int64_t t = monoNs();
      if (!sameHost(src, from.addr)) {
        ++ignored;
        continue;
      }
      if (arrivals.empty()) {
        std::printf("first heartbeat after %.1f ms\n", static_cast<double>(t - start) / 1e6);
      }
      if (arrivals.size() >= kMaxArrivals) {
        stopped = true;
        break;
      }
      arrivals.push_back({t, phase});
    }
    if (stopped) break;
  }
  close(fd);
  const double ran_s = static_cast<double>(monoNs() - start) / 1e9;
  std::printf("%zu heartbeats from the source in %.1f s (%zu datagrams from others ignored)%s\n",
              arrivals.size(), ran_s, ignored, stopped ? "; stopped at the arrival limit" : "");
  printTable(arrivals, phases, threshold_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string listen_text;
  std::string from_text;
  long duration_s = 60;
  double threshold_ms = 250;
  std::vector<std::string> phases;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    std::string value = argv[++i];
    char* end = nullptr;
    if (arg == "--listen") {
      listen_text = value;
    } else if (arg == "--from") {
      from_text = value;
    } else if (arg == "--duration-s") {
      duration_s = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || duration_s < 1 || duration_s > kMaxDurationS) {
        usage("--duration-s takes 1 to 3600");
      }
    } else if (arg == "--threshold-ms") {
      threshold_ms = std::strtod(value.c_str(), &end);
      if (*end != '\0' || threshold_ms <= 0) usage("--threshold-ms takes a positive number");
    } else if (arg == "--phase") {
      if (value.empty() || value.find_first_of(" \t=") != std::string::npos) {
        usage("--phase takes a name without spaces or '='");
      }
      phases.push_back(value);
    } else {
      usage(("unknown option " + arg).c_str());
    }
  }
  Endpoint listen;
  Endpoint from;
  if (!parseEndpoint(listen_text, listen)) usage("--listen takes ADDR:PORT or [ADDR]:PORT");
  if (!parseAddress(from_text, 0, from)) usage("--from takes an IPv4 or IPv6 address");
  if (from.addr.ss_family != listen.addr.ss_family) usage("--from and --listen differ in family");
  if (phases.empty()) phases.push_back("all");
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // the progress lines reach a log file at once

  struct sigaction stop {};
  stop.sa_handler = onStop;
  sigaction(SIGTERM, &stop, nullptr);
  sigaction(SIGINT, &stop, nullptr);
  struct sigaction mark {};
  mark.sa_handler = onMark;
  sigaction(SIGUSR1, &mark, nullptr);
  return run(listen, from, duration_s, threshold_ms, phases);
}
