#pragma once

#include <optional>
#include <string_view>

#include "common/duration.h"
#include "platform/logger.h"
#include "platform/notifier.h"

namespace tandem::platform {

// Notifier over sd_notify(3): a datagram to $NOTIFY_SOCKET, nothing when it is unset.
class SystemdNotifier final : public Notifier {
 public:
  explicit SystemdNotifier(Logger& logger) : logger_(logger) {}
  void notify(std::string_view state) override;

  // The watchdog period systemd asks for through WATCHDOG_USEC (honouring WATCHDOG_PID), or
  // nullopt when there is none or it is meant for another process.
  static std::optional<Millis> watchdogPeriod();

 private:
  Logger& logger_;
  bool failure_logged_ = false;  // a dead socket would otherwise log on every watchdog ping
};

}  // namespace tandem::platform
