#include "ipc/access.h"

#include <algorithm>

namespace tandem::ipc {

Result<void> mayChange(const Credentials& who, const UserInfo& user, const AdminGroup& group) {
  if (who.uid == 0) return {};
  if (who.gid == group.gid) return {};
  if (std::find(user.groups.begin(), user.groups.end(), group.gid) != user.groups.end()) {
    return {};
  }
  return fail(ErrorCode::kPermissionDenied,
              "permission denied: user " + user.name + " (uid " + std::to_string(who.uid) +
                  ") is not root and not in group " + group.name +
                  "; run tandem as root, or add the user to " + group.name +
                  " (the group is control.group in tandem.conf)");
}

Result<UserInfo> CachedUserDb::user(uid_t uid, gid_t primary) const {
  const auto now = clock_();
  const auto key = std::make_pair(uid, primary);
  if (auto it = entries_.find(key); it != entries_.end()) {
    if (now - it->second.at < ttl_) return it->second.info;
    entries_.erase(it);
  }
  auto info = inner_.user(uid, primary);
  if (!info) return info;
  if (entries_.size() >= capacity_) {
    // Full: forget the oldest answer.
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.at < oldest->second.at) oldest = it;
    }
    entries_.erase(oldest);
  }
  entries_[key] = Entry{*info, now};
  return info;
}

Result<AccessPolicy> AccessPolicy::create(const UserDb& users, const std::string& group_name) {
  auto gid = users.groupId(group_name);
  if (!gid) {
    return fail(gid.error().code, "control.group \"" + group_name + "\": " + gid.error().message +
                                      "; create the group or name an existing one");
  }
  return AccessPolicy(users, AdminGroup{group_name, *gid});
}

bool AccessPolicy::privileged(uid_t uid, gid_t gid) const {
  if (uid == 0 || gid == group_.gid) return true;
  auto user = users_->user(uid, gid);
  return user && mayChange(Credentials{uid, gid, 0}, *user, group_).has_value();
}

Result<void> AccessPolicy::authorize(RequestId id, Peer& peer) const {
  if (!needsControlGroup(id)) return {};
  if (!peer.may_change) {
    const Credentials& who = peer.credentials;
    if (who.uid == 0) {
      peer.may_change = Result<void>();
    } else {
      auto user = users_->user(who.uid, who.gid);
      if (!user) {
        // Cannot tell: refuse, and say why, rather than guess in the caller's favour.
        peer.may_change =
            Result<void>(fail(ErrorCode::kPermissionDenied,
                              "permission denied: cannot look up the groups of uid " +
                                  std::to_string(who.uid) + ": " + user.error().message));
      } else {
        peer.may_change = mayChange(who, *user, group_);
      }
    }
  }
  if (!*peer.may_change) {
    return fail(ErrorCode::kPermissionDenied,
                std::string(requestName(id)) + ": " + peer.may_change->error().message);
  }
  return {};
}

}  // namespace tandem::ipc
