#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>

// Who may hold how many admin connections. Any local user may connect (status is public), so
// one user must not be able to take every connection, and root must always get in during an
// incident. Pure: the server asks admit() on accept and calls release() on close.
namespace tandem::ipc {

struct ConnectionLimits {
  size_t total = 64;    // every connection, root's included
  size_t reserved = 8;  // of those, the last ones only root and the admin group may take
  size_t per_user = 8;  // any one uid but root
};

class ConnectionBudget {
 public:
  explicit ConnectionBudget(ConnectionLimits limits = {}) : limits_(limits) {}

  // nullopt: admitted and counted. Otherwise why not, for the log and the refusal.
  // privileged: root, or a member of the admin group.
  std::optional<std::string> admit(uid_t uid, bool privileged);
  void release(uid_t uid);

  size_t open() const { return open_; }
  size_t openBy(uid_t uid) const;
  const ConnectionLimits& limits() const { return limits_; }

 private:
  ConnectionLimits limits_;
  size_t open_ = 0;
  std::map<uid_t, size_t> by_uid_;
};

}  // namespace tandem::ipc
