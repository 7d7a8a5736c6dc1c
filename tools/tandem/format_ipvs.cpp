#include "format_ipvs.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "commands.h"
#include "format_table.h"
#include "ipc/protocol.h"

namespace tandem::cli {

namespace {

using nlohmann::json;

std::string rateOf(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_unsigned()) return numberOf(object, key);
  return formatRate(it->get<uint64_t>());
}

std::string serviceLine(const json& s) {
  std::string out;
  auto name = s.find("name");
  if (name != s.end() && name->is_string()) out = name->get<std::string>() + ": ";
  out += textOf(s, "key") + ", scheduler " + textOf(s, "scheduler");
  auto flags = s.find("flags");
  if (flags != s.end() && flags->is_array()) {
    for (const json& f : *flags) {
      if (!f.is_string()) continue;
      const std::string flag = f.get<std::string>();
      out += ", " + flag;
      if (flag == "persistent") out += " " + numberOf(s, "persistence_timeout_s") + "s";
    }
  }
  auto managed = s.find("managed");
  if (managed != s.end() && managed->is_boolean() && !managed->get<bool>()) {
    out += " (not managed by tandem)";
  }
  return out + "\n";
}

std::string totalsLine(const json& s) {
  return "  " + numberOf(s, "conns") + " connections, " + rateOf(s, "cps") + "/s; in " +
         rateOf(s, "in_pps") + " pkt/s " + rateOf(s, "in_bps") + " B/s; out " +
         rateOf(s, "out_pps") + " pkt/s " + rateOf(s, "out_bps") + " B/s\n";
}

std::string endpoint(const json& d) {
  std::string addr = textOf(d, "address");
  if (addr.find(':') != std::string::npos) addr = "[" + addr + "]";
  return addr + ":" + numberOf(d, "port");
}

std::string healthOf(const json& d) {
  auto it = d.find("health");
  if (it != d.end() && it->is_null()) return "-";
  return textOf(d, "health");
}

std::string destinations(const json& s) {
  auto dests = s.find("destinations");
  if (dests == s.end() || !dests->is_array() || dests->empty()) {
    return "  (no real servers: new connections are refused)\n";
  }
  std::vector<Row> rows{{"Real server", "Forward", "Weight", "Health", "Active", "Inactive",
                         "Conn/s", "In pkt/s", "Out pkt/s", "In B/s", "Out B/s"}};
  for (const json& d : *dests) {
    if (!d.is_object()) continue;
    rows.push_back({endpoint(d), textOf(d, "forward"), numberOf(d, "weight"), healthOf(d),
                    numberOf(d, "active_conns"), numberOf(d, "inactive_conns"), rateOf(d, "cps"),
                    rateOf(d, "in_pps"), rateOf(d, "out_pps"), rateOf(d, "in_bps"),
                    rateOf(d, "out_bps")});
  }
  return table(rows, {false, false, true, false, true, true, true, true, true, true, true}, "  ");
}

}  // namespace

std::string formatRate(uint64_t v) {
  auto scaled = [](uint64_t value, uint64_t unit, const char* suffix) {
    // Three significant digits: 12.3k, 123k, 1.23M.
    const uint64_t hundredths = value * 100 / unit;
    std::string out;
    if (hundredths < 1000) {
      out = std::to_string(hundredths / 100) + "." + std::to_string(hundredths / 10 % 10) +
            std::to_string(hundredths % 10);
    } else if (hundredths < 10000) {
      out = std::to_string(hundredths / 100) + "." + std::to_string(hundredths / 10 % 10);
    } else {
      out = std::to_string(hundredths / 100);
    }
    return out + suffix;
  };
  if (v < 10'000) return std::to_string(v);
  if (v < 1'000'000) return scaled(v, 1'000, "k");
  if (v < 1'000'000'000) return scaled(v, 1'000'000, "M");
  return scaled(v, 1'000'000'000, "G");
}

std::string formatIpvs(const json& answer) {
  auto services = answer.find("services");
  if (services == answer.end() || !services->is_array()) {
    return "IPVS table: ? (tandemd's answer has no service list)\n";
  }
  size_t managed = 0;
  for (const json& s : *services) {
    auto m = s.find("managed");
    if (m != s.end() && m->is_boolean() && m->get<bool>()) ++managed;
  }
  std::string state = "?";
  if (auto sync = answer.find("in_sync"); sync != answer.end() && sync->is_boolean()) {
    state = sync->get<bool>() ? "in sync" : "NOT in sync with the config (see the tandemd log)";
  }
  std::string every;
  if (auto ms = answer.find("monitor_interval_ms");
      ms != answer.end() && ms->is_number_unsigned()) {
    every = ", checked every " + formatAge(ms->get<int64_t>());
  }
  const size_t n = services->size();
  std::string out = "IPVS table: " + std::to_string(n) + " service" + (n == 1 ? "" : "s") + " (" +
                    std::to_string(managed) + " managed by tandem), " + state + every + "\n";
  for (const json& s : *services) {
    if (!s.is_object()) continue;
    out += "\n" + serviceLine(s) + totalsLine(s) + destinations(s);
  }
  return out;
}

CommandOutput renderIpvs(const Result<json>& answer, bool json_output) {
  return renderAnswer(answer, json_output, "tandem ipvs show", formatIpvs);
}

}  // namespace tandem::cli
