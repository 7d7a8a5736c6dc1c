#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "ipc/access.h"
#include "ipc/admin_handler.h"

namespace tandem::ipc::fakes {

// Records what it was asked and answers what the test set.
class FakeAdminHandler final : public AdminHandler {
 public:
  nlohmann::json status() override {
    calls.push_back("status");
    if (throw_on_status) throw std::runtime_error("status exploded");
    return status_doc;
  }
  Result<nlohmann::json> standby(const StandbyArgs& args) override {
    calls.push_back("standby " + args.node + (args.on ? " on" : " off") +
                    (args.lifetime_ms ? " " + std::to_string(*args.lifetime_ms) + "ms" : ""));
    return answer;
  }
  Result<nlohmann::json> move(const MoveArgs& args) override {
    calls.push_back("move " + args.target +
                    (args.lifetime_ms ? " " + std::to_string(*args.lifetime_ms) + "ms" : ""));
    return answer;
  }
  void audited(const std::string& request, const std::string& who, const std::string& body,
               const std::string& result) override {
    audited_calls.push_back(request + " " + who + " " + body + " " + result);
  }
  Result<nlohmann::json> maintenance(bool on) override {
    calls.push_back(std::string("maintenance ") + (on ? "on" : "off"));
    return answer;
  }
  Result<nlohmann::json> clear() override {
    calls.push_back("clear");
    return answer;
  }
  Result<nlohmann::json> reload() override {
    calls.push_back("reload");
    return answer;
  }

  nlohmann::json status_doc = {{"cluster", "prod"}, {"local_node", "lb1"}};
  Result<nlohmann::json> answer = nlohmann::json::object();
  bool throw_on_status = false;
  std::vector<std::string> calls;
  std::vector<std::string> audited_calls;  // what audited() was told
};

// A user database in a map: users not in it exist only with their primary group.
class FakeUserDb final : public UserDb {
 public:
  Result<gid_t> groupId(const std::string& name) const override {
    auto it = groups.find(name);
    if (it == groups.end()) return fail(ErrorCode::kNotFound, "no such group");
    return it->second;
  }
  Result<UserInfo> user(uid_t uid, gid_t primary) const override {
    ++lookups;
    if (lookup_fails) return fail(ErrorCode::kIo, "the directory is down");
    auto it = users.find(uid);
    if (it == users.end()) return UserInfo{"uid " + std::to_string(uid), {primary}};
    return it->second;
  }

  std::map<std::string, gid_t> groups{{"root", 0}, {"tandem-admin", 900}};
  std::map<uid_t, UserInfo> users;
  bool lookup_fails = false;
  mutable int lookups = 0;
};

}  // namespace tandem::ipc::fakes
