// ipvs_apply: a test tool for the VM lab (not installed). Loads a tandem config with the real
// loader, builds the desired IPVS table with every real server healthy, and reconciles the
// kernel's table of this network namespace to it (Reconciler over NetlinkKernel), as tandemd's
// IPVS loop does on the active director.
//
//   ipvs_apply CONFIG [--times] [--timeout MS]
//
// Prints machine-readable lines on stdout, one "key=value" each:
//   writes=N          netlink requests that changed the kernel (NetlinkKernel::writes() delta,
//                     the reconcile and the global timeouts together)
//   reconcile_ms=X    wall time of Reconciler::reconcile() alone (dump, plan, apply), ms
//   services=N, destinations=N (the desired table), applied=N, replans=N, drift=N (the report)
// and with --times also load_ms (read + parse + validate the config), desired_ms
// (desiredTable), open_ms (the netlink socket and family lookup), timeouts_ms and total_ms
// (from main() to the end; the process start is not in it).
//
// Exit codes: 0 applied; 1 the reconcile or the timeouts failed (the message names the request);
// 2 bad usage or an invalid config (every diagnostic printed); 3 no IPVS in this kernel.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "config/config_loader.h"
#include "config/file_system.h"
#include "ipvs/ipvs_desired.h"
#include "ipvs/ipvs_netlink.h"
#include "ipvs/reconciler.h"

namespace {

using namespace tandem;
using namespace tandem::resources::ipvs;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int usage(const char* why) {
  std::fprintf(stderr,
               "ipvs_apply: %s\nusage: ipvs_apply CONFIG [--times] [--timeout MS]\n"
               "  loads CONFIG (a tandem config), reconciles this namespace's IPVS table to it\n"
               "  with every real server healthy, prints writes=N and reconcile_ms=X\n",
               why);
  return 2;
}

const char* levelName(IpvsLogLevel l) {
  switch (l) {
    case IpvsLogLevel::kError:
      return "error";
    case IpvsLogLevel::kWarning:
      return "warning";
    case IpvsLogLevel::kNotice:
      return "notice";
    case IpvsLogLevel::kInfo:
      return "info";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  const auto start = Clock::now();
  std::string path;
  bool times = false;
  long timeout_ms = 5000;  // TCG stalls: generous, it only bounds a lost answer
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--times") {
      times = true;
    } else if (a == "--timeout") {
      if (i + 1 >= argc) return usage("--timeout needs a value in milliseconds");
      char* end = nullptr;
      timeout_ms = std::strtol(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0' || timeout_ms <= 0 || timeout_ms > 600000) {
        return usage("--timeout: a whole number of milliseconds from 1 to 600000");
      }
    } else if (a == "-h" || a == "--help") {
      usage("help");
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return usage(("unknown option " + std::string(a)).c_str());
    } else if (path.empty()) {
      path = a;
    } else {
      return usage("one CONFIG only");
    }
  }
  if (path.empty()) return usage("no CONFIG given");

  auto t = Clock::now();
  config::PosixFileSystem fs;
  config::LoadResult loaded = config::loadConfigFile(path, fs);
  const double load_ms = msSince(t);
  if (!loaded.ok()) {
    std::cerr << loaded.diagnostics.formatAll();
    std::cerr << "ipvs_apply: " << path << ": " << loaded.diagnostics.errorCount()
              << " error(s); fix the config (tandem config verify " << path << ")\n";
    return 2;
  }
  const config::Config& cfg = *loaded.config;

  t = Clock::now();
  const Table desired = desiredTable(cfg, Health{});
  const double desired_ms = msSince(t);
  size_t dests = 0;
  for (const auto& s : desired.services) dests += s.destinations.size();

  t = Clock::now();
  auto opened = NetlinkKernel::open(Millis(timeout_ms));
  const double open_ms = msSince(t);
  if (!opened) {
    std::cerr << "ipvs_apply: " << opened.error().message << "\n";
    return 3;
  }
  NetlinkKernel& kernel = **opened;

  Reconciler reconciler(kernel, [](IpvsLogLevel level, const std::string& line) {
    std::cerr << "ipvs_apply: " << levelName(level) << ": " << line << "\n";
  });
  const uint64_t before = kernel.writes();
  t = Clock::now();
  auto report = reconciler.reconcile(desired, cfg.ipvs.manage == config::IpvsManage::kAll);
  const double reconcile_ms = msSince(t);
  if (!report) {
    std::cerr << "ipvs_apply: reconcile failed: " << report.error().message << "\n";
    std::printf("writes=%llu\n", static_cast<unsigned long long>(kernel.writes() - before));
    return 1;
  }
  t = Clock::now();
  auto timeouts = reconciler.applyTimeouts(desiredTimeouts(cfg.ipvs));
  const double timeouts_ms = msSince(t);
  if (!timeouts) {
    std::cerr << "ipvs_apply: setting the [ipvs] timeouts failed: " << timeouts.error().message
              << "\n";
    std::printf("writes=%llu\n", static_cast<unsigned long long>(kernel.writes() - before));
    return 1;
  }

  std::printf("writes=%llu\n", static_cast<unsigned long long>(kernel.writes() - before));
  std::printf("reconcile_ms=%.3f\n", reconcile_ms);
  std::printf("services=%zu\ndestinations=%zu\napplied=%zu\nreplans=%zu\ndrift=%zu\n",
              desired.services.size(), dests, report->applied, report->replans, report->drift);
  if (times) {
    std::printf("load_ms=%.3f\ndesired_ms=%.3f\nopen_ms=%.3f\ntimeouts_ms=%.3f\ntotal_ms=%.3f\n",
                load_ms, desired_ms, open_ms, timeouts_ms, msSince(start));
  }
  return 0;
}
