#pragma once

#include <span>
#include <string>
#include <vector>

#include "common/log.h"
#include "config/config.h"
#include "sysctl/sysctl_access.h"
#include "sysctl/sysctl_plan.h"

namespace tandem::resources::sysctl {

struct SysctlLogLine {
  LogLevel level;  // kWarning or kNotice
  std::string text;
};

// Runs the plan and, when writer is given ([ipvs] set_sysctls = true), sets every settable key
// that is wrong, reads it back, and says so: "set net.ipv4.ip_forward=1 (was 0) for nat
// forwarding". A key already right is never written. Returns the lines to log, in order; it
// never fails: a write the kernel refuses becomes a warning with the fix.
std::vector<SysctlLogLine> checkSysctls(const config::Config& config,
                                        std::span<const std::string> node_interfaces,
                                        const SysctlReader& reader, SysctlWriter* writer);

}  // namespace tandem::resources::sysctl
