#include "config/failback_override.h"

namespace tandem::config {

namespace {

constexpr Millis kLongestDelay = std::chrono::hours(24);

Error badOverride(std::string_view text, const std::string& why) {
  return Error{ErrorCode::kInvalidArgument,
               "failback override \"" + std::string(text) + "\" (TANDEM_FAILBACK or --failback): " +
                   why + "; use auto, manual or delayed:DURATION (e.g. delayed:5m)"};
}

}  // namespace

Result<FailbackSetting> parseFailbackOverride(std::string_view text) {
  if (text == "auto") return FailbackSetting{FailbackPolicy::kAuto, Millis(0)};
  if (text == "manual") return FailbackSetting{FailbackPolicy::kManual, Millis(0)};
  constexpr std::string_view kDelayed = "delayed";
  if (text.starts_with(kDelayed)) {
    std::string_view rest = text.substr(kDelayed.size());
    if (rest.empty()) return fail(badOverride(text, "a delayed failback needs its delay"));
    if (rest.front() != ':') return fail(badOverride(text, "not a failback policy"));
    auto d = parseDuration(rest.substr(1));
    if (!d)
      return fail(badOverride(text, "\"" + std::string(rest.substr(1)) + "\" is not a duration"));
    if (*d <= Millis(0) || *d > kLongestDelay) {
      return fail(badOverride(text, "the delay must be more than 0s and at most 24h"));
    }
    return FailbackSetting{FailbackPolicy::kDelayed, *d};
  }
  return fail(badOverride(text, "not a failback policy"));
}

std::string failbackText(const FailbackSetting& s) {
  switch (s.policy) {
    case FailbackPolicy::kAuto:
      return "auto";
    case FailbackPolicy::kManual:
      return "manual";
    case FailbackPolicy::kDelayed:
      return "delayed " + formatDuration(s.delay);
  }
  return "?";
}

FailbackSetting failbackOf(const Config& cfg) {
  return {cfg.cluster.failback, cfg.cluster.failback == FailbackPolicy::kDelayed
                                    ? cfg.cluster.failback_delay
                                    : Millis(0)};
}

void applyFailbackOverride(Config& cfg, const std::optional<FailbackSetting>& override_setting) {
  if (!override_setting) return;
  cfg.cluster.failback = override_setting->policy;
  cfg.cluster.failback_delay = override_setting->delay;
}

}  // namespace tandem::config
