#pragma once

#include "ipc/access.h"

namespace tandem::ipc {

// UserDb on NSS: getgrnam_r, getpwuid_r and getgrouplist. With files or systemd NSS these
// answer in microseconds; a remote directory (LDAP, sssd without cache) could stall the loop,
// which is why the server asks only when a change is requested, once per connection.
class PosixUserDb final : public UserDb {
 public:
  Result<gid_t> groupId(const std::string& name) const override;
  Result<UserInfo> user(uid_t uid, gid_t primary) const override;
};

}  // namespace tandem::ipc
