#include "platform/systemd_notifier.h"

#include <systemd/sd-daemon.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace tandem::platform {

void SystemdNotifier::notify(std::string_view state) {
  int rc = sd_notify(0, std::string(state).c_str());
  if (rc < 0 && !failure_logged_) {
    failure_logged_ = true;
    logger_.log(LogLevel::kWarning, "sd_notify failed error=\"" + std::string(std::strerror(-rc)) +
                                        "\"; the service manager will not hear from tandemd");
  } else if (rc > 0) {
    failure_logged_ = false;
  }
}

std::optional<Millis> SystemdNotifier::watchdogPeriod() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  // Rounded down, so pings are never later than asked.
  return std::max(Millis(static_cast<int64_t>(usec / 1000)), Millis(1));
}

}  // namespace tandem::platform
