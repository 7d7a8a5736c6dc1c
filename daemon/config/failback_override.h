#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/duration.h"
#include "common/result.h"
#include "config/config.h"

// The failback policy a director's environment may impose over its config file: the unit's
// environment file (/etc/default/tandem) sets TANDEM_FAILBACK, which tandemd takes as
// --failback. The config file stays the source of truth for everything else, and `tandem
// status` says which of the two is in force.
namespace tandem::config {

struct FailbackSetting {
  FailbackPolicy policy = FailbackPolicy::kManual;
  Millis delay{0};  // kDelayed only
  bool operator==(const FailbackSetting&) const = default;
};

// "auto", "manual" or "delayed:DURATION" (e.g. "delayed:5m", 1 ms to 24 h). An error names
// the value and what to write instead.
Result<FailbackSetting> parseFailbackOverride(std::string_view text);

// "auto", "manual", "delayed 5m".
std::string failbackText(const FailbackSetting& s);

// The cluster's failback as the config file has it.
FailbackSetting failbackOf(const Config& cfg);

// Puts the override into cfg (nothing when there is none).
void applyFailbackOverride(Config& cfg, const std::optional<FailbackSetting>& override_setting);

}  // namespace tandem::config
