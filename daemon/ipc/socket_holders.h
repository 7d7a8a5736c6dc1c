#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

// Who listens on an abstract unix socket name: for the one message that matters when tandemd
// cannot publish its admin socket because someone bound the name first. Reads /proc/net/unix for
// the listening sockets named "@NAME", then /proc/PID/fd for the processes holding them. Only
// on that failure path, never on the loop: it walks every process.
namespace tandem::ipc {

struct SocketHolder {
  pid_t pid = 0;
  uid_t uid = 0;
  std::string comm;  // /proc/PID/comm
};

// proc_root: "/proc", or a test's fake tree. Empty when nothing listens on the name, or when
// /proc cannot tell (another PID namespace, hidepid).
std::vector<SocketHolder> abstractSocketHolders(std::string_view name,
                                                const std::string& proc_root = "/proc");

// "pid 4242 (squat, uid 1000)" for each holder, joined by ", "; "" when none is known.
std::string describeHolders(const std::vector<SocketHolder>& holders);

}  // namespace tandem::ipc
