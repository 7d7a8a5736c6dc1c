#include "ipc/connection_budget.h"

namespace tandem::ipc {

std::optional<std::string> ConnectionBudget::admit(uid_t uid, bool privileged) {
  if (open_ >= limits_.total) {
    return "all " + std::to_string(limits_.total) + " admin connections are open";
  }
  if (!privileged && open_ + limits_.reserved >= limits_.total) {
    return "the last " + std::to_string(limits_.reserved) +
           " admin connections are kept for root and the admin group";
  }
  size_t& mine = by_uid_[uid];
  if (uid != 0 && mine >= limits_.per_user) {
    return "uid " + std::to_string(uid) + " already holds " + std::to_string(mine) +
           " admin connections, the most one user may";
  }
  ++mine;
  ++open_;
  return std::nullopt;
}

void ConnectionBudget::release(uid_t uid) {
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end() || it->second == 0 || open_ == 0) return;
  --open_;
  if (--it->second == 0) by_uid_.erase(it);
}

size_t ConnectionBudget::openBy(uid_t uid) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? 0 : it->second;
}

}  // namespace tandem::ipc
