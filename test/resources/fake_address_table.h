#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vip/address_table.h"

namespace tandem::fakes {

// The kernel's address table in memory: interfaces by name, addresses on them, and the same
// answers rtnetlink gives (EEXIST for a second add, EADDRNOTAVAIL for a missing delete, ENODEV
// for a missing interface). Counts every write, and can fail the next call of a kind.
class FakeAddressTable final : public resources::AddressTable {
 public:
  void addInterface(const std::string& name, uint32_t ifindex) { links_[name] = ifindex; }
  void removeInterface(const std::string& name) {
    auto it = links_.find(name);
    if (it == links_.end()) return;
    std::erase_if(entries_, [&](const auto& e) { return e.ifindex == it->second; });
    links_.erase(it);
  }
  // Puts an address in place as an operator (or another program) would.
  void put(const std::string& ifname, const char* prefix, uint32_t flags = 0,
           std::string label = "") {
    resources::rtnl::AddressEntry e;
    e.ifindex = links_.at(ifname);
    e.prefix = *IpPrefix::parse(prefix);
    e.flags = flags;
    e.label = label.empty() && e.prefix.address.family == Family::kInet ? ifname : label;
    entries_.push_back(e);
  }
  // Removes an address behind tandem's back.
  void drop(const char* prefix) {
    auto p = *IpPrefix::parse(prefix);
    std::erase_if(entries_, [&](const auto& e) { return e.prefix == p; });
  }
  const std::vector<resources::rtnl::AddressEntry>& entries() const { return entries_; }
  std::optional<resources::rtnl::AddressEntry> find(const std::string& ifname,
                                                    const char* prefix) const {
    auto p = *IpPrefix::parse(prefix);
    for (const auto& e : entries_) {
      if (e.ifindex == links_.at(ifname) && e.prefix == p) return e;
    }
    return std::nullopt;
  }

  // The next add/remove/dump fails with this error (once).
  std::optional<Error> fail_add, fail_remove, fail_dump;
  // Runs inside the next addresses() call, after it has answered: a change racing the dump.
  std::function<void()> after_dump;

  int adds = 0;
  int removes = 0;
  int dumps = 0;
  std::vector<resources::rtnl::AddressRequest> added;

  Result<uint32_t> interfaceIndex(const std::string& name) override {
    auto it = links_.find(name);
    if (it == links_.end())
      return fail(ErrorCode::kNotFound, "interface " + name + " does not exist");
    return it->second;
  }
  Result<std::string> interfaceName(uint32_t ifindex) override {
    for (const auto& [name, idx] : links_) {
      if (idx == ifindex) return name;
    }
    return fail(ErrorCode::kNotFound, "no interface with index " + std::to_string(ifindex));
  }
  Result<std::vector<resources::rtnl::AddressEntry>> addresses(Family family) override {
    ++dumps;
    if (fail_dump) return take(fail_dump);
    std::vector<resources::rtnl::AddressEntry> out;
    for (const auto& e : entries_) {
      if (e.prefix.address.family == family) out.push_back(e);
    }
    if (after_dump) std::exchange(after_dump, nullptr)();
    return out;
  }
  Result<void> add(const resources::rtnl::AddressRequest& req) override {
    ++adds;
    if (fail_add) return take(fail_add);
    if (!hasIndex(req.ifindex)) return fail(ErrorCode::kNotFound, "cannot add: No such device");
    for (const auto& e : entries_) {
      if (e.ifindex == req.ifindex && e.prefix.address == req.prefix.address) {
        return fail(ErrorCode::kAlreadyExists,
                    "cannot add " + req.prefix.toString() + ": File exists");
      }
    }
    resources::rtnl::AddressEntry e;
    e.ifindex = req.ifindex;
    e.prefix = req.prefix;
    e.label = req.prefix.address.family == Family::kInet
                  ? (req.label.empty() ? req.interface : req.label)
                  : "";
    e.flags = req.nodad ? 0x02u : 0u;
    entries_.push_back(e);
    added.push_back(req);
    return {};
  }
  Result<void> remove(const resources::rtnl::AddressRequest& req) override {
    ++removes;
    if (fail_remove) return take(fail_remove);
    auto n = std::erase_if(entries_, [&](const auto& e) {
      return e.ifindex == req.ifindex && e.prefix == req.prefix;
    });
    if (n == 0)
      return fail(ErrorCode::kNotFound,
                  "cannot remove " + req.prefix.toString() + ": Cannot assign requested address");
    return {};
  }

 private:
  static Unexpected<Error> take(std::optional<Error>& e) {
    Error copy = *e;
    e.reset();
    return fail(std::move(copy));
  }
  bool hasIndex(uint32_t idx) const {
    return std::any_of(links_.begin(), links_.end(),
                       [&](const auto& l) { return l.second == idx; });
  }

  std::map<std::string, uint32_t> links_;
  std::vector<resources::rtnl::AddressEntry> entries_;
};

}  // namespace tandem::fakes
