// sync_ctl: a test tool for the VM lab (not installed). Starts, lists and stops the kernel's
// IPVS connection-sync daemons of this network namespace through NetlinkKernel's SyncKernel,
// the code tandemd uses (tests/sync_daemons reads them back with ipvsadm as well).
//
//   sync_ctl start master|backup --interface IF --sync-id N [--group G] [--port P] [--ttl T]
//                                [--maxlen L]
//   sync_ctl list        one line per daemon:
//                        "master interface=IF sync_id=N maxlen=L group=G port=P ttl=T"
//   sync_ctl stop master|backup
//
// Exit codes: 0 done; 1 the kernel refused (stderr: "sync_ctl: code=<ErrorCode> <message>");
// 2 bad usage or a daemon the codec refuses; 3 no IPVS in this kernel.
#include <charconv>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "await_loop.h"
#include "ipvs/ipvs_netlink.h"
#include "loop/qb_dispatcher.h"

namespace {

using namespace tandem;
using namespace tandem::resources::ipvs;

int usage(const std::string& why) {
  std::cerr << "sync_ctl: " << why
            << "\nusage: sync_ctl start master|backup --interface IF --sync-id N [--group G]\n"
               "                [--port P] [--ttl T] [--maxlen L]\n"
               "       sync_ctl list\n"
               "       sync_ctl stop master|backup\n";
  return 2;
}

std::optional<SyncState> stateOf(std::string_view s) {
  if (s == "master") return SyncState::kMaster;
  if (s == "backup") return SyncState::kBackup;
  return std::nullopt;
}

template <typename T>
std::optional<T> number(std::string_view s) {
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Parses start's options into d; an error message, or nothing.
std::optional<std::string> parseStart(const std::vector<std::string_view>& args, SyncDaemon& d) {
  bool has_interface = false;
  bool has_id = false;
  for (size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return "option " + std::string(args[i]) + " needs a value";
    const std::string_view opt = args[i];
    const std::string_view val = args[i + 1];
    bool ok = true;
    if (opt == "--interface") {
      d.interface = std::string(val);
      has_interface = true;
    } else if (opt == "--sync-id") {
      auto v = number<uint32_t>(val);
      ok = v.has_value();
      d.sync_id = v.value_or(0);
      has_id = ok;
    } else if (opt == "--group") {
      auto g = IpAddress::parse(val);
      ok = g.has_value();
      if (g) d.group = *g;
    } else if (opt == "--port") {
      auto v = number<uint16_t>(val);
      ok = v.has_value();
      d.port = v.value_or(0);
    } else if (opt == "--ttl") {
      auto v = number<uint8_t>(val);
      ok = v.has_value();
      d.ttl = v.value_or(0);
    } else if (opt == "--maxlen") {
      auto v = number<uint16_t>(val);
      ok = v.has_value();
      d.max_len = v.value_or(0);
    } else {
      return "unknown option " + std::string(opt);
    }
    if (!ok) return "bad value \"" + std::string(val) + "\" for " + std::string(opt);
  }
  if (!has_interface || !has_id) return "start needs --interface and --sync-id";
  return std::nullopt;
}

std::string line(const SyncDaemon& d) {
  return syncStateName(d.state) + " interface=" + d.interface +
         " sync_id=" + std::to_string(d.sync_id) + " maxlen=" + std::to_string(d.max_len) +
         " group=" + d.group.toString() + " port=" + std::to_string(d.port) +
         " ttl=" + std::to_string(d.ttl);
}

int refused(const Error& e) {
  std::cerr << "sync_ctl: code=" << errorCodeName(e.code) << " " << e.message << "\n";
  return e.code == ErrorCode::kInvalidArgument ? 2 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) return usage("no command");
  const std::string_view cmd = args[0];
  std::optional<SyncState> state;
  SyncDaemon daemon;
  if (cmd == "start" || cmd == "stop") {
    if (args.size() < 2 || !(state = stateOf(args[1]))) {
      return usage(std::string(cmd) + " needs master or backup");
    }
    if (cmd == "start") {
      daemon.state = *state;
      if (auto why = parseStart({args.begin() + 2, args.end()}, daemon)) return usage(*why);
    } else if (args.size() != 2) {
      return usage("stop takes no options");
    }
  } else if (cmd != "list" || args.size() != 1) {
    return usage("unknown command " + std::string(cmd));
  }

  auto dispatcher = loop::QbDispatcher::create();
  if (!dispatcher) {
    std::cerr << "sync_ctl: cannot create the event loop: " << dispatcher.error().message << "\n";
    return 1;
  }
  loop::Dispatcher& d = **dispatcher;
  auto opened = NetlinkKernel::open(d);
  if (!opened) {
    std::cerr << "sync_ctl: " << opened.error().message << "\n";
    return 3;
  }
  SyncKernel& kernel = **opened;
  if (cmd == "list") {
    auto r = vm::await<std::vector<SyncDaemon>>(
        d, [&](KernelDone<std::vector<SyncDaemon>> done) { kernel.daemons(std::move(done)); });
    if (!r) return refused(r.error());
    for (const auto& x : *r) std::cout << line(x) << "\n";
    return 0;
  }
  auto r = vm::await<void>(d, [&](KernelDone<void> done) {
    if (cmd == "start") {
      kernel.startDaemon(daemon, std::move(done));
    } else {
      kernel.stopDaemon(*state, std::move(done));
    }
  });
  if (!r) return refused(r.error());
  return 0;
}
