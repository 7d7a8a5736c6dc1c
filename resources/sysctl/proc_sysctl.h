#pragma once

#include <string>

#include "sysctl/sysctl_access.h"

namespace tandem::resources::sysctl {

// The shell: reads and writes files under a /proc/sys root. Per-namespace keys (net.*) are those
// of the network namespace of the thread that calls, as the kernel resolves them at open.
class ProcSysctl final : public SysctlReader, public SysctlWriter {
 public:
  explicit ProcSysctl(std::string root = "/proc/sys") : root_(std::move(root)) {}

  [[nodiscard]] Result<std::string> read(std::string_view key) const override;
  [[nodiscard]] Result<void> write(std::string_view key, std::string_view value) override;

 private:
  std::string root_;
};

}  // namespace tandem::resources::sysctl
