#pragma once

#include <string_view>

namespace tandem::platform {

// The service manager's readiness protocol (sd_notify(3)). One call sends one message of
// newline-separated VAR=value assignments, so READY=1 and its STATUS= arrive together.
class Notifier {
 public:
  virtual ~Notifier() = default;
  // Best effort: without a service manager listening there is nobody to tell.
  virtual void notify(std::string_view state) = 0;
};

}  // namespace tandem::platform
