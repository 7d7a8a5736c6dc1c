#include "sysctl/sysctl_apply.h"

namespace tandem::resources::sysctl {

std::vector<SysctlLogLine> checkSysctls(const config::Config& config,
                                        std::span<const std::string> node_interfaces,
                                        const SysctlReader& reader, SysctlWriter* writer) {
  std::vector<SysctlLogLine> lines;
  for (const SysctlFinding& f : sysctlPlan(config, node_interfaces, reader)) {
    if (f.severity == LogLevel::kNotice) {
      lines.push_back({LogLevel::kNotice, describe(f)});
      continue;
    }
    if (writer == nullptr || !f.settable) {
      lines.push_back({LogLevel::kWarning, describe(f)});
      continue;
    }
    if (auto w = writer->write(f.key, f.required); !w) {
      lines.push_back({LogLevel::kWarning,
                       describe(f) + " (set_sysctls could not set it: " + w.error().message + ")"});
      continue;
    }
    // Read back: a value the kernel silently clamps or a namespace that ignores it must not be
    // reported as set.
    auto after = reader.read(f.key);
    if (!after || *after != f.required) {
      std::string seen = after ? *after : after.error().message;
      lines.push_back({LogLevel::kWarning, describe(f) + " (set_sysctls wrote " + f.required +
                                               " but it reads back as " + seen + ")"});
      continue;
    }
    lines.push_back({LogLevel::kNotice, "set " + f.key + "=" + f.required + " (was " + f.current +
                                            ") for " + f.purpose + " " + f.context});
  }
  return lines;
}

}  // namespace tandem::resources::sysctl
