#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
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

// A UserDb that remembers what it looked up, bounded in size and age: a flood of connections
// from one user costs one lookup, not one each (NSS may be a remote directory, and it runs on
// the loop). groupId is passed through: it is asked at start-up and on reload only.
class CachedUserDb final : public UserDb {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  CachedUserDb(const UserDb& inner, Clock clock, size_t capacity = 256,
               std::chrono::seconds ttl = std::chrono::seconds(60))
      : inner_(inner), clock_(std::move(clock)), capacity_(capacity), ttl_(ttl) {}

  [[nodiscard]] Result<gid_t> groupId(const std::string& name) const override {
    return inner_.groupId(name);
  }
  // Failures are not remembered: the next ask tries again.
  [[nodiscard]] Result<UserInfo> user(uid_t uid, gid_t primary) const override;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    UserInfo info;
    std::chrono::steady_clock::time_point at;
  };
  const UserDb& inner_;
  Clock clock_;
  size_t capacity_;
  std::chrono::seconds ttl_;
  mutable std::map<std::pair<uid_t, gid_t>, Entry> entries_;
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
  // Root, or in the admin group (by its gid or its group list; a failed lookup is no).
  [[nodiscard]] bool privileged(uid_t uid, gid_t gid) const;
  const AdminGroup& group() const { return group_; }

 private:
  AccessPolicy(const UserDb& users, AdminGroup group) : users_(&users), group_(std::move(group)) {}

  const UserDb* users_;
  AdminGroup group_;
};

}  // namespace tandem::ipc
