// ipvs_apply: a test tool for the VM lab (not installed). Loads a tandem config with the real
// loader, builds the desired IPVS table with every real server healthy, and reconciles the
// kernel's table of this network namespace to it (Reconciler over NetlinkKernel), as tandemd's
// IPVS loop does on the active director.
//
//   ipvs_apply CONFIG [--then CHANGED [--monitor]] [--times] [--timeout MS]
//
// Prints machine-readable lines on stdout, one "key=value" each:
//   writes=N          netlink requests that changed the kernel (NetlinkKernel::writes() delta,
//                     the reconcile and the global timeouts together)
//   sends=N           sendmsg() calls of the whole run, the family lookup and the dumps among
//                     them (the reconciler sends a window of requests in one datagram)
//   reconcile_ms=X    wall time of Reconciler::reconcile() alone (dump, plan, apply), ms
//   services=N, destinations=N (the desired table), applied=N, replans=N, drift=N, dumps=N
//                     (the report)
// With --then CHANGED, the same process and the same Reconciler then take CHANGED, as tandemd
// does on a reload (a kChange pass: planned against the table the first pass left, no dump), and
// print the same keys for that pass prefixed "change." (change.writes, change.reconcile_ms,
// change.dumps, change.load_ms, ...; change.plan_ms: the pure plan of the change alone, timed
// apart). --monitor adds a kVerify pass after it (what tandemd does
// every monitor_interval: a whole dump, drift repaired), prefixed "monitor.".
// and with --times also load_ms (read + parse + validate the config), desired_ms
// (desiredTable), open_ms (the netlink socket and family lookup), timeouts_ms and total_ms
// (from main() to the end; the process start is not in it).
//
// Exit codes: 0 applied; 1 the reconcile or the timeouts failed (the message names the request);
// 2 bad usage or an invalid config (every diagnostic printed); 3 no IPVS in this kernel.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "await_loop.h"
#include "config/config_loader.h"
#include "config/file_system.h"
#include "ipvs/ipvs_desired.h"
#include "ipvs/ipvs_netlink.h"
#include "ipvs/ipvs_plan.h"
#include "ipvs/reconciler.h"
#include "loop/qb_dispatcher.h"

namespace {

using namespace tandem;
using namespace tandem::resources::ipvs;
using Clock = std::chrono::steady_clock;

using vm::await;

Result<ReconcileReport> reconcileNow(loop::Dispatcher& d, Reconciler& r, const Table& desired,
                                     bool manage_all, Pass pass) {
  return await<ReconcileReport>(d, [&](std::function<void(Result<ReconcileReport>)> done) {
    r.reconcile(desired, manage_all, pass, std::move(done));
  });
}

Result<void> timeoutsNow(loop::Dispatcher& d, Reconciler& r, const Timeouts& want) {
  return await<void>(
      d, [&](std::function<void(Result<void>)> done) { r.applyTimeouts(want, std::move(done)); });
}

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int usage(const char* why) {
  std::fprintf(stderr,
               "ipvs_apply: %s\nusage: ipvs_apply CONFIG [--then CHANGED [--monitor]] [--times] "
               "[--timeout MS]\n"
               "  loads CONFIG (a tandem config), reconciles this namespace's IPVS table to it\n"
               "  with every real server healthy, prints writes=N and reconcile_ms=X; --then\n"
               "  applies CHANGED next in the same process, like tandemd on a reload\n",
               why);
  return 2;
}

// Loads and validates a config, timing it (load_ms); on errors prints every diagnostic and a
// line naming the file, and returns nothing.
std::optional<config::Config> loadTimed(const std::string& path, const config::FileSystem& fs,
                                        double& load_ms) {
  const auto t = Clock::now();
  config::LoadResult loaded = config::loadConfigFile(path, fs);
  load_ms = msSince(t);
  if (!loaded.ok()) {
    std::cerr << loaded.diagnostics.formatAll();
    std::cerr << "ipvs_apply: " << path << ": " << loaded.diagnostics.errorCount()
              << " error(s); fix the config (tandem config verify " << path << ")\n";
    return std::nullopt;
  }
  return *loaded.config;
}

// The next pass of the same Reconciler, as tandemd makes on a reload: prints its keys prefixed
// "NAME.". The config's load is timed apart from the reconcile.
// previous: the table the last pass applied; the plan against it (what a kChange pass plans) is
// timed on its own as NAME.plan_ms, to tell the pure half of the pass from the kernel's.
int applyNext(const char* name, const std::string& path, const config::FileSystem& fs,
              loop::Dispatcher& d, NetlinkKernel& kernel, Reconciler& reconciler, Pass pass,
              const Table& previous) {
  double load_ms = 0;
  const std::optional<config::Config> loaded = loadTimed(path, fs, load_ms);
  if (!loaded) return 2;
  const config::Config& cfg = *loaded;
  const Table desired = desiredTable(cfg, Health{});
  const bool manage_all = cfg.ipvs.manage == config::IpvsManage::kAll;
  auto t = Clock::now();
  const size_t planned = plan(desired, previous, manage_all).size();
  const double plan_ms = msSince(t);
  const uint64_t before = kernel.writes();
  t = Clock::now();
  auto report = reconcileNow(d, reconciler, desired, manage_all, pass);
  const double reconcile_ms = msSince(t);
  const auto writes = static_cast<unsigned long long>(kernel.writes() - before);
  if (!report) {
    std::cerr << "ipvs_apply: " << name << ": reconcile failed: " << report.error().message << "\n";
    std::printf("%s.writes=%llu\n", name, writes);
    return 1;
  }
  auto timeouts = timeoutsNow(d, reconciler, desiredTimeouts(cfg.ipvs));
  if (!timeouts) {
    std::cerr << "ipvs_apply: " << name
              << ": setting the [ipvs] timeouts failed: " << timeouts.error().message << "\n";
    return 1;
  }
  std::printf("%s.writes=%llu\n%s.reconcile_ms=%.3f\n%s.load_ms=%.3f\n", name,
              static_cast<unsigned long long>(kernel.writes() - before), name, reconcile_ms, name,
              load_ms);
  std::printf("%s.applied=%zu\n%s.replans=%zu\n%s.drift=%zu\n%s.dumps=%zu\n", name, report->applied,
              name, report->replans, name, report->drift, name, report->dumps);
  std::printf("%s.plan_ms=%.3f\n%s.planned=%zu\n", name, plan_ms, name, planned);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto start = Clock::now();
  std::string path;
  std::string then;
  bool monitor = false;
  bool times = false;
  long timeout_ms = 5000;  // TCG stalls: generous, it only bounds a lost answer
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--times") {
      times = true;
    } else if (a == "--monitor") {
      monitor = true;
    } else if (a == "--then") {
      if (i + 1 >= argc) return usage("--then needs a config file");
      then = argv[++i];
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
  if (monitor && then.empty()) return usage("--monitor goes with --then");

  config::PosixFileSystem fs;
  double load_ms = 0;
  const std::optional<config::Config> loaded = loadTimed(path, fs, load_ms);
  if (!loaded) return 2;
  const config::Config& cfg = *loaded;

  auto t = Clock::now();
  const Table desired = desiredTable(cfg, Health{});
  const double desired_ms = msSince(t);
  size_t dests = 0;
  for (const auto& s : desired.services) dests += s.destinations.size();

  auto dispatcher = loop::QbDispatcher::create();
  if (!dispatcher) {
    std::cerr << "ipvs_apply: cannot create the event loop: " << dispatcher.error().message << "\n";
    return 1;
  }
  loop::Dispatcher& d = **dispatcher;
  t = Clock::now();
  auto opened = NetlinkKernel::open(d, Millis(timeout_ms));
  const double open_ms = msSince(t);
  if (!opened) {
    std::cerr << "ipvs_apply: " << opened.error().message << "\n";
    return 3;
  }
  NetlinkKernel& kernel = **opened;

  Reconciler reconciler(d, kernel, [](LogLevel level, const std::string& line) {
    std::cerr << "ipvs_apply: " << logLevelName(level) << ": " << line << "\n";
  });
  const uint64_t before = kernel.writes();
  t = Clock::now();
  auto report = reconcileNow(d, reconciler, desired, cfg.ipvs.manage == config::IpvsManage::kAll,
                             Pass::kVerify);
  const double reconcile_ms = msSince(t);
  if (!report) {
    std::cerr << "ipvs_apply: reconcile failed: " << report.error().message << "\n";
    std::printf("writes=%llu\n", static_cast<unsigned long long>(kernel.writes() - before));
    return 1;
  }
  t = Clock::now();
  auto timeouts = timeoutsNow(d, reconciler, desiredTimeouts(cfg.ipvs));
  const double timeouts_ms = msSince(t);
  if (!timeouts) {
    std::cerr << "ipvs_apply: setting the [ipvs] timeouts failed: " << timeouts.error().message
              << "\n";
    std::printf("writes=%llu\n", static_cast<unsigned long long>(kernel.writes() - before));
    return 1;
  }

  std::printf("writes=%llu\n", static_cast<unsigned long long>(kernel.writes() - before));
  std::printf("reconcile_ms=%.3f\n", reconcile_ms);
  std::printf("sends=%llu\n", static_cast<unsigned long long>(kernel.socket().sends()));
  std::printf("services=%zu\ndestinations=%zu\napplied=%zu\nreplans=%zu\ndrift=%zu\ndumps=%zu\n",
              desired.services.size(), dests, report->applied, report->replans, report->drift,
              report->dumps);
  if (times) {
    std::printf("load_ms=%.3f\ndesired_ms=%.3f\nopen_ms=%.3f\ntimeouts_ms=%.3f\n", load_ms,
                desired_ms, open_ms, timeouts_ms);
  }
  if (!then.empty()) {
    int rc = applyNext("change", then, fs, d, kernel, reconciler, Pass::kChange, desired);
    if (rc == 0 && monitor) {
      // The monitor pass plans against the dump; the changed table stands in for it.
      config::LoadResult changed = config::loadConfigFile(then, fs);
      const Table after = changed.ok() ? desiredTable(*changed.config, Health{}) : Table{};
      rc = applyNext("monitor", then, fs, d, kernel, reconciler, Pass::kVerify, after);
    }
    if (rc != 0) return rc;
  }
  if (times) std::printf("total_ms=%.3f\n", msSince(start));
  return 0;
}
