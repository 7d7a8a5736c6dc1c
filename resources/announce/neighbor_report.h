#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "announce/frames.h"
#include "common/ip_address.h"

// What the director learned when it probed the VIP's configured neighbours after announcing
// it: for `tandem status`, one entry per vip.verify_neighbors address.
namespace tandem::resources::announce {

struct NeighborResult {
  IpAddress address;
  bool answered = false;
  std::optional<MacAddress> mac;                 // when answered
  std::optional<std::chrono::microseconds> rtt;  // from the first probe to the answer
  auto operator<=>(const NeighborResult&) const = default;
};

struct Verification {
  // kNotRun: not held, or nothing to verify; kProbing: probes out, waiting; kDone: finished,
  // answered or timed out.
  enum class State { kNotRun, kProbing, kDone };
  State state = State::kNotRun;
  std::vector<NeighborResult> neighbors;
  std::string error;  // why probing could not run (e.g. the socket could not be opened)
  auto operator<=>(const Verification&) const = default;
};

std::string_view stateName(Verification::State s);  // "not-run", "probing", "done"

// {"state": "done", "error": "...", "neighbors": [{"address": "198.51.100.1",
//  "answered": true, "mac": "02:00:5e:00:00:01", "rtt_us": 412}, ...]}; "error" only when
// set, "mac" and "rtt_us" only when answered.
nlohmann::json toJson(const Verification& v);

// One log line's worth: "198.51.100.1=02:00:5e:00:00:01(0.41ms) 198.51.100.2=no-answer".
std::string summary(const Verification& v);

}  // namespace tandem::resources::announce
