#pragma once

#include <span>
#include <string>
#include <vector>

#include "common/log.h"
#include "config/config.h"
#include "sysctl/sysctl_access.h"

// What each IPVS forwarding method needs from the kernel, checked against the settings in
// force. Pure: the settings come in through a SysctlReader.
//
// On the director:
//   nat  The real servers route their replies through the director, which must forward them
//        (and undo the NAT on the way): net.ipv4.ip_forward=1, or net.ipv6.conf.all.forwarding=1
//        for IPv6 real servers. dr and tun need no forwarding: IPVS transmits the rewritten or
//        encapsulated packet itself, and replies go from the real server straight to the client.
//   any  A VIP must be answerable by ARP on its interface; arp_ignore=8 (the larger of conf.all
//        and conf.IF counts) makes the director stay silent for every local address, so the
//        neighbours lose the VIP when their cache entry expires, whatever tandem announced.
// Not checked, because tandem cannot know they are needed: net.ipv4.vs.conntrack matters only
// when stateful firewall rules must also see IPVS connections (kernel
// Documentation/networking/ipvs-sysctl.rst), which is the operator's own ruleset.
//
// On the real servers (dr, tun), which the director cannot inspect, one guidance note per real
// server says what to set there.
namespace tandem::resources::sysctl {

struct SysctlFinding {
  // kWarning: this director's setting is wrong for the config. kNotice: guidance for another
  // host (a real server); nothing on this director is wrong.
  LogLevel severity = LogLevel::kWarning;
  // Director findings: the key, its value as read ("" when unreadable), the value it needs.
  std::string key;
  std::string current;
  std::string required;
  bool settable = false;  // [ipvs] set_sysctls may write `required` to `key`
  std::string purpose;    // "nat forwarding"; for guidance the real server, "real server 1.2.3.4"
  std::string why;        // the reason, one clause
  std::string fix;        // the exact command(s) to run, and where
  std::string context;    // key=value, e.g. "svc=web,api"
};

// The findings for this director, whose [[node]] lists node_interfaces. Director warnings
// first (in key order, each key once), then one note per real server.
std::vector<SysctlFinding> sysctlPlan(const config::Config& config,
                                      std::span<const std::string> node_interfaces,
                                      const SysctlReader& current);

// One log line for a finding.
std::string describe(const SysctlFinding& finding);

}  // namespace tandem::resources::sysctl
