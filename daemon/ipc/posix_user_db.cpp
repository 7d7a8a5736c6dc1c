#include "ipc/posix_user_db.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace tandem::ipc {

namespace {

constexpr size_t kMaxBuffer =
    1 << 20;  // a group with this many members' worth of names is not sane

size_t initialBuffer(int name) {
  long n = ::sysconf(name);
  return n > 0 ? static_cast<size_t>(n) : 16384;
}

}  // namespace

Result<gid_t> PosixUserDb::groupId(const std::string& name) const {
  std::vector<char> buf(initialBuffer(_SC_GETGR_R_SIZE_MAX));
  while (true) {
    group grp{};
    group* found = nullptr;
    int err = ::getgrnam_r(name.c_str(), &grp, buf.data(), buf.size(), &found);
    if (err == ERANGE && buf.size() < kMaxBuffer) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (err != 0) return fail(errnoError(err, "cannot look up the group"));
    if (found == nullptr) return fail(ErrorCode::kNotFound, "no such group");
    return found->gr_gid;
  }
}

Result<UserInfo> PosixUserDb::user(uid_t uid, gid_t primary) const {
  std::vector<char> buf(initialBuffer(_SC_GETPW_R_SIZE_MAX));
  passwd pw{};
  passwd* found = nullptr;
  while (true) {
    int err = ::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found);
    if (err == ERANGE && buf.size() < kMaxBuffer) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (err != 0) return fail(errnoError(err, "cannot look up uid " + std::to_string(uid)));
    break;
  }
  if (found == nullptr) return UserInfo{"uid " + std::to_string(uid), {primary}};

  UserInfo info{pw.pw_name, {}};
  int count = 32;
  while (true) {
    std::vector<gid_t> groups(static_cast<size_t>(count));
    int n = count;
    if (::getgrouplist(pw.pw_name, primary, groups.data(), &n) >= 0) {
      groups.resize(static_cast<size_t>(n));
      info.groups = std::move(groups);
      return info;
    }
    // glibc stores the number needed in n; guard against an implementation that does not.
    if (n <= count) n = count * 2;
    if (static_cast<size_t>(n) > kMaxBuffer) {
      return fail(ErrorCode::kInternal, "user " + info.name + " is in too many groups");
    }
    count = n;
  }
}

}  // namespace tandem::ipc
