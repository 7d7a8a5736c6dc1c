#include "announce/neighbor_report.h"

#include <cstdio>

namespace tandem::resources::announce {

std::string_view stateName(Verification::State s) {
  switch (s) {
    case Verification::State::kNotRun:
      return "not-run";
    case Verification::State::kProbing:
      return "probing";
    case Verification::State::kDone:
      return "done";
  }
  return "?";
}

nlohmann::json toJson(const Verification& v) {
  nlohmann::json out = nlohmann::json::object();
  out["state"] = std::string(stateName(v.state));
  if (!v.error.empty()) out["error"] = v.error;
  nlohmann::json list = nlohmann::json::array();
  for (const NeighborResult& n : v.neighbors) {
    nlohmann::json e = nlohmann::json::object();
    e["address"] = n.address.toString();
    e["answered"] = n.answered;
    if (n.mac) e["mac"] = n.mac->toString();
    if (n.rtt) e["rtt_us"] = n.rtt->count();
    list.push_back(std::move(e));
  }
  out["neighbors"] = std::move(list);
  return out;
}

std::string summary(const Verification& v) {
  std::string out;
  for (const NeighborResult& n : v.neighbors) {
    if (!out.empty()) out += ' ';
    out += n.address.toString() + '=';
    if (!n.answered) {
      out += "no-answer";
      continue;
    }
    out += n.mac ? n.mac->toString() : "?";
    if (n.rtt) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "(%.2fms)", static_cast<double>(n.rtt->count()) / 1000.0);
      out += buf;
    }
  }
  return out;
}

}  // namespace tandem::resources::announce
