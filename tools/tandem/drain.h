#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "admin.h"
#include "format_status.h"

// `tandem real drain SERVICE SERVER [--wait] [--timeout D]`, `tandem real enable SERVICE
// SERVER` and `tandem real list`. Pure: the daemon, the clock and the sleep are handed in, so
// the requests, the waiting and what is printed are golden-tested on simulated time
// (test/cli/golden/drain).
namespace tandem::cli {

struct DrainCall {
  bool on = true;  // drain; false: enable
  std::string service;
  std::string server;
  bool wait = false;
  std::optional<std::string> timeout;  // with wait; default kDefaultDrainTimeout
};

inline constexpr const char* kDefaultDrainTimeout = "10m";
// How often --wait asks tandemd (which answers from its last table dump, every
// [ipvs] monitor_interval).
inline constexpr int64_t kDrainPollMs = 1000;

using MonotonicMs = std::function<int64_t()>;
using SleepMs = std::function<void(int64_t)>;

// Sends the drain (or enable); with wait, then asks for the drains every kDrainPollMs until
// the ACTIVE's table holds no active connection and no template for the server, the timeout
// passes, or the drain is gone (enabled meanwhile). The ACTIVE is where the connections are.
CommandOutput runDrain(const DrainCall& call, const DaemonCall& daemon, const MonotonicMs& now,
                       const SleepMs& sleep, bool json);

// `tandem real list`: the drains and how far each has come on every node.
CommandOutput renderDrains(const Result<nlohmann::json>& answer, bool json);

}  // namespace tandem::cli
