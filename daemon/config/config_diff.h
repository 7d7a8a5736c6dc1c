#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

// What a reload would change: pure, from the running config and the one just loaded. A reload
// applies every section live, except the few keys that fix what tandemd is (its node, its group,
// its port, its directories): those refuse the reload, named with both values, and nothing is
// applied.
namespace tandem::config {

// A key that cannot change while tandemd runs.
struct Refusal {
  std::string key;      // "cluster.group"
  std::string running;  // the running value, as TOML would write it: "\"tandem\""
  std::string next;     // the value in the new file
  std::string why;      // "the CPG group is joined once, at start"

  // "cluster.group cannot change while tandemd runs: running "tandem", new "other" (the CPG
  // group is joined once, at start); put the old value back, or restart tandemd"
  std::string format() const;
};

// One section's changes, in words, for the log and `systemctl status`.
struct SectionChange {
  std::string section;               // "cluster", "nodes", "vips", ... (kSections)
  std::vector<std::string> details;  // "heartbeat_interval 200ms -> 100ms"

  // "vips: added 198.51.100.13/32 on eth0; removed 198.51.100.11/32 on eth0"
  std::string format() const;
};

// The sections a reload reports on, in the order they are applied and logged.
inline constexpr std::string_view kSections[] = {"cluster", "nodes",  "vips",    "virtual_servers",
                                                 "sync",    "ipvs",   "control", "metrics",
                                                 "daemon",  "notify", "routes"};

struct ReloadDiff {
  std::vector<Refusal> refused;
  std::vector<SectionChange> changes;  // in kSections order; unchanged sections are absent

  bool accepted() const { return refused.empty(); }
  bool changed(std::string_view section) const;
  // "cluster,vips" or "nothing"
  std::string changedSections() const;
};

// self is this director's [[node]] name: a file that no longer names it is refused.
ReloadDiff diffReload(const Config& running, const Config& next, std::string_view self);

}  // namespace tandem::config
