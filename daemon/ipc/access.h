#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "ipc/protocol.h"

// Who may ask tandemd what. Status is for every local user; changing anything is for root and
// the members of control.group. The decision is pure; the user database is behind UserDb.
namespace tandem::ipc {

// The peer's identity as the kernel vouches for it (SO_PEERCRED / SCM_CREDENTIALS).
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
};

struct UserInfo {
  std::string name;           // "uid 1234" when the uid has no passwd entry
  std::vector<gid_t> groups;  // every group the user is in, its primary group included
};

// The user and group database (getpwuid_r, getgrnam_r, getgrouplist in production).
class UserDb {
 public:
  virtual ~UserDb() = default;
  [[nodiscard]] virtual Result<gid_t> groupId(const std::string& name) const = 0;
  // Never fails for want of a passwd entry: such a user is in its primary group only.
  [[nodiscard]] virtual Result<UserInfo> user(uid_t uid, gid_t primary) const = 0;
};

struct AdminGroup {
  std::string name;
  gid_t gid = 0;
};

// The pure rule: root, or a user whose gid or group list holds the admin group.
[[nodiscard]] Result<void> mayChange(const Credentials& who, const UserInfo& user,
                                     const AdminGroup& group);

// What the server remembers of one connection: the credentials, and the verdict on changes
// once a change was asked for (so a monitoring client that only reads never costs a lookup).
struct Peer {
  Credentials credentials;
  std::optional<Result<void>> may_change;
};

class AccessPolicy {
 public:
  // Resolves the group now, so a missing group is a start-up error and not a surprise at the
  // first `tandem standby`.
  [[nodiscard]] static Result<AccessPolicy> create(const UserDb& users,
                                                   const std::string& group_name);

  [[nodiscard]] Result<void> authorize(RequestId id, Peer& peer) const;
  const AdminGroup& group() const { return group_; }

 private:
  AccessPolicy(const UserDb& users, AdminGroup group) : users_(&users), group_(std::move(group)) {}

  const UserDb* users_;
  AdminGroup group_;
};

}  // namespace tandem::ipc
