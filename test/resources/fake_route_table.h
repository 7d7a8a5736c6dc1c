#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "route/route_table.h"

namespace tandem::fakes {

// The kernel's routing tables in memory, with the answers rtnetlink gives: EEXIST for a second
// add, ESRCH (kNotFound) for a missing delete, ENODEV for a missing interface. Counts writes.
class FakeRouteTable final : public resources::route::RouteTable {
 public:
  void addInterface(const std::string& name, uint32_t ifindex) { links_[name] = ifindex; }
  // Puts a route in place as another program (or an earlier tandemd) would.
  void put(const resources::rtnl::RouteRequest& req) { routes_.push_back(entry(req)); }
  // Deletes routes to prefix behind tandem's back.
  void drop(const char* prefix) {
    auto p = *IpPrefix::parse(prefix);
    std::erase_if(routes_, [&](const auto& e) { return e.prefix == p; });
  }
  bool has(const char* prefix) const {
    auto p = *IpPrefix::parse(prefix);
    return std::any_of(routes_.begin(), routes_.end(),
                       [&](const auto& e) { return e.prefix == p; });
  }
  const std::vector<resources::rtnl::RouteEntry>& entries() const { return routes_; }
  bool owns(const std::string& name) const { return owned_.count(name) != 0; }
  // `ip link del NAME`: the device and every route through it go.
  void deleteInterface(const std::string& name) {
    const uint32_t index = links_[name];
    std::erase_if(routes_, [&](const auto& e) { return e.ifindex == index; });
    links_.erase(name);
  }
  // The process that owns devices ends: the kernel deletes them and every route through them.
  void ownerExits() {
    for (const std::string& name : owned_) {
      const uint32_t index = links_[name];
      std::erase_if(routes_, [&](const auto& e) { return e.ifindex == index; });
      links_.erase(name);
    }
    owned_.clear();
  }

  std::optional<Error> fail_add;  // the next add fails with this (once)
  // Every write in order: "+" or "-", the prefix, " table T metric M".
  std::vector<std::string> writes;
  int adds = 0;
  int removes = 0;
  int dumps = 0;

  Result<uint32_t> interfaceIndex(const std::string& name) override {
    auto it = links_.find(name);
    if (it == links_.end())
      return fail(ErrorCode::kNotFound, "interface " + name + " does not exist");
    return it->second;
  }
  Result<uint32_t> ownInterface(const std::string& name) override {
    if (owned_.count(name) && links_.count(name)) return links_[name];
    if (links_.count(name) && !owned_.count(name)) {
      return fail(ErrorCode::kAlreadyExists,
                  "interface " + name + " exists already and is not tandemd's own device");
    }
    ownerExits();  // one device at most
    owned_.insert(name);
    return links_[name] = next_index_++;
  }
  void releaseOwnedInterface() override { ownerExits(); }
  Result<std::vector<resources::rtnl::RouteEntry>> routes(uint32_t table,
                                                          uint8_t protocol) override {
    ++dumps;
    std::vector<resources::rtnl::RouteEntry> out;
    for (const auto& e : routes_) {
      if (e.table == table && e.protocol == protocol) out.push_back(e);
    }
    return out;
  }
  Result<void> add(const resources::rtnl::RouteRequest& req) override {
    ++adds;
    writes.push_back("+" + describe(req));
    if (fail_add) {
      Error e = *fail_add;
      fail_add.reset();
      return fail(e);
    }
    if (find(req) != routes_.end()) return fail(ErrorCode::kAlreadyExists, "File exists");
    routes_.push_back(entry(req));
    return {};
  }
  Result<void> remove(const resources::rtnl::RouteRequest& req) override {
    ++removes;
    writes.push_back("-" + describe(req));
    auto it = find(req);
    if (it == routes_.end()) return fail(ErrorCode::kNotFound, "No such process");
    routes_.erase(it);
    return {};
  }

 private:
  static std::string describe(const resources::rtnl::RouteRequest& req) {
    return req.prefix.toString() + " table " + std::to_string(req.table) + " metric " +
           std::to_string(req.metric);
  }
  static resources::rtnl::RouteEntry entry(const resources::rtnl::RouteRequest& req) {
    resources::rtnl::RouteEntry e;
    e.prefix = req.prefix;
    e.table = req.table;
    e.protocol = req.protocol;
    e.metric = req.metric == 0 && req.prefix.address.family == Family::kInet6 ? 1024 : req.metric;
    // The kernel puts an IPv6 blackhole on lo (index 1); an IPv4 one has no interface.
    e.ifindex = req.ifindex == 0 && req.prefix.address.family == Family::kInet6 ? 1 : req.ifindex;
    e.type = req.ifindex == 0 ? 6 : 1;  // RTN_BLACKHOLE, RTN_UNICAST
    return e;
  }
  // As the kernel matches a delete: destination, table, protocol; metric and interface if given.
  std::vector<resources::rtnl::RouteEntry>::iterator find(const resources::rtnl::RouteRequest& r) {
    return std::find_if(routes_.begin(), routes_.end(), [&](const auto& e) {
      return e.prefix == r.prefix && e.table == r.table && e.protocol == r.protocol &&
             (r.metric == 0 || e.metric == r.metric) && (r.ifindex == 0 || e.ifindex == r.ifindex);
    });
  }

  std::map<std::string, uint32_t> links_;
  std::set<std::string> owned_;
  uint32_t next_index_ = 100;
  std::vector<resources::rtnl::RouteEntry> routes_;
};

// A RouteTable for a subsystem to own that shows the same fake kernel the test looks at.
class RouteTableView final : public resources::route::RouteTable {
 public:
  explicit RouteTableView(FakeRouteTable& kernel) : k_(kernel) {}
  Result<uint32_t> interfaceIndex(const std::string& n) override { return k_.interfaceIndex(n); }
  Result<uint32_t> ownInterface(const std::string& n) override { return k_.ownInterface(n); }
  void releaseOwnedInterface() override { k_.releaseOwnedInterface(); }
  Result<std::vector<resources::rtnl::RouteEntry>> routes(uint32_t t, uint8_t p) override {
    return k_.routes(t, p);
  }
  Result<void> add(const resources::rtnl::RouteRequest& r) override { return k_.add(r); }
  Result<void> remove(const resources::rtnl::RouteRequest& r) override { return k_.remove(r); }

 private:
  FakeRouteTable& k_;
};

}  // namespace tandem::fakes
