#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

// The kernel settings under /proc/sys, behind two narrow interfaces so that the checker is pure
// and tests hand it a map. Keys are in sysctl(8)'s dotted form, "net.ipv4.ip_forward"; an
// interface name that itself has dots (a VLAN, "eth0.100") is written with slashes in its place,
// "net.ipv4.conf.eth0/100.arp_ignore", as sysctl(8) does.
namespace tandem::resources::sysctl {

class SysctlReader {
 public:
  virtual ~SysctlReader() = default;
  // The value with surrounding whitespace removed; kNotFound when the key does not exist (the
  // interface is absent, IPv6 is disabled).
  [[nodiscard]] virtual Result<std::string> read(std::string_view key) const = 0;
};

class SysctlWriter {
 public:
  virtual ~SysctlWriter() = default;
  [[nodiscard]] virtual Result<void> write(std::string_view key, std::string_view value) = 0;
};

// Joins key parts with dots, writing dots inside a part (an interface name) as slashes.
std::string sysctlKey(const std::vector<std::string_view>& parts);

// The /proc/sys path of a dotted key: "net.ipv4.conf.eth0/100.rp_filter" ->
// "net/ipv4/conf/eth0.100/rp_filter" (relative to /proc/sys).
std::string procPath(std::string_view key);

}  // namespace tandem::resources::sysctl
