#include "vip/vip_resource.h"

#include <linux/if_addr.h>

#include <algorithm>

namespace tandem::resources {
namespace {

bool sameAddress(const IpAddress& a, const IpAddress& b) { return a == b; }

std::string hint(const Error& e) {
  switch (e.code) {
    case ErrorCode::kPermissionDenied:
      return "; tandemd needs CAP_NET_ADMIN (run it as root)";
    default:
      return "";
  }
}

}  // namespace

VipPlan planVip(const config::Vip& vip, uint32_t ifindex,
                const std::vector<rtnl::AddressEntry>& table) {
  VipPlan plan;
  const rtnl::AddressEntry* here = nullptr;
  const rtnl::AddressEntry* elsewhere = nullptr;
  for (const auto& e : table) {
    if (!sameAddress(e.prefix.address, vip.address.address)) continue;
    if (e.ifindex == ifindex) {
      // The one with the configured prefix wins if the address is there twice.
      if (here == nullptr || e.prefix.length == vip.address.length) here = &e;
    } else if (elsewhere == nullptr) {
      elsewhere = &e;
    }
  }
  if (here != nullptr) {
    plan.found = *here;
    const bool dad_failed = (here->flags & IFA_F_DADFAILED) != 0;
    plan.kind = (here->prefix.length == vip.address.length && !dad_failed)
                    ? VipPlan::Kind::kAdopt
                    : VipPlan::Kind::kReplace;
    return plan;
  }
  if (elsewhere != nullptr) {
    plan.found = *elsewhere;
    plan.kind = VipPlan::Kind::kConflict;
    return plan;
  }
  plan.kind = VipPlan::Kind::kAdd;
  return plan;
}

VipResource::VipResource(config::Vip vip, std::shared_ptr<AddressTable> table, VipLog log,
                         OnVipChange on_change)
    : vip_(std::move(vip)),
      table_(std::move(table)),
      log_(std::move(log)),
      on_change_(std::move(on_change)),
      name_("vip " + vip_.address.toString()) {}

std::string VipResource::where() const { return vip_.address.toString() + " on " + vip_.interface; }

void VipResource::log(LogLevel level, const std::string& line) const {
  if (log_) log_(level, line);
}

rtnl::AddressRequest VipResource::request(uint32_t ifindex, const IpPrefix& prefix) const {
  rtnl::AddressRequest r;
  r.prefix = prefix;
  r.ifindex = ifindex;
  r.interface = vip_.interface;
  if (prefix.address.family == Family::kInet) r.label = vip_.label;
  // A VIP that moves must answer at once: duplicate address detection would hold it back
  // for a second or more, and the other director has just released it.
  r.nodad = prefix.address.family == Family::kInet6;
  return r;
}

Result<uint32_t> VipResource::ifindex() const {
  auto idx = table_->interfaceIndex(vip_.interface);
  if (!idx && idx.error().code == ErrorCode::kNotFound) {
    return fail(ErrorCode::kNotFound, "VIP " + where() + ": interface " + vip_.interface +
                                          " does not exist on this director; create it or fix "
                                          "vip.interface");
  }
  return idx;
}

Result<void> VipResource::ensure(bool from_monitor) {
  auto idx = ifindex();
  if (!idx) return fail(idx.error());
  // Two rounds: an address that appears between the dump and the add (EEXIST) is planned
  // again from a fresh dump rather than reported as a failure.
  for (int round = 0; round < 2; ++round) {
    auto table = table_->addresses(vip_.address.address.family);
    if (!table) return fail(table.error().code, "VIP " + where() + ": " + table.error().message);
    const VipPlan plan = planVip(vip_, *idx, *table);
    switch (plan.kind) {
      case VipPlan::Kind::kAdopt:
        if (!held_ && !from_monitor) {
          std::string line = "VIP " + where() + " is already in place; adopted it";
          if (vip_.address.address.family == Family::kInet && !vip_.label.empty() &&
              plan.found->label != vip_.label) {
            line += " (its label is \"" + plan.found->label + "\", the config says \"" +
                    vip_.label + "\"; left as it is)";
          }
          log(LogLevel::kNotice, line);
        }
        held_ = true;
        seen_ = true;
        return {};
      case VipPlan::Kind::kConflict: {
        auto other = table_->interfaceName(plan.found->ifindex);
        std::string other_name =
            other ? *other : "interface index " + std::to_string(plan.found->ifindex);
        return fail(ErrorCode::kAlreadyExists,
                    "VIP " + where() + ": " + vip_.address.address.toString() + " is already on " +
                        other_name + " (as " + plan.found->prefix.toString() +
                        "); remove it there or fix vip.interface");
      }
      case VipPlan::Kind::kReplace: {
        auto r = table_->remove(request(*idx, plan.found->prefix));
        if (!r && r.error().code != ErrorCode::kNotFound) {
          return fail(r.error().code, r.error().message + hint(r.error()));
        }
        log(LogLevel::kWarning, "VIP " + where() + " was there as " +
                                    plan.found->prefix.toString() +
                                    ((plan.found->flags & IFA_F_DADFAILED) != 0
                                         ? " with duplicate address detection failed"
                                         : "") +
                                    "; replacing it");
        [[fallthrough]];
      }
      case VipPlan::Kind::kAdd: {
        auto r = table_->add(request(*idx, vip_.address));
        if (!r && r.error().code == ErrorCode::kAlreadyExists && round == 0) continue;
        if (!r) return fail(r.error().code, r.error().message + hint(r.error()));
        if (from_monitor && held_) {
          log(LogLevel::kWarning, "VIP " + where() + " was removed behind tandem's back; restored");
        } else {
          std::string line = "VIP " + where() + " added";
          if (!vip_.label.empty()) line += " label=" + vip_.label;
          log(LogLevel::kNotice, line);
        }
        held_ = true;
        seen_ = true;
        return {};
      }
    }
  }
  return fail(ErrorCode::kTryAgain,
              "VIP " + where() + ": the kernel reports it present and absent in turn");
}

Result<bool> VipResource::release() {
  auto idx = ifindex();
  if (!idx) {
    // No interface, no address on it: nothing left to stop.
    if (idx.error().code == ErrorCode::kNotFound) {
      held_ = false;
      seen_ = false;
      return false;
    }
    return fail(idx.error());
  }
  auto table = table_->addresses(vip_.address.address.family);
  if (!table) return fail(table.error().code, "VIP " + where() + ": " + table.error().message);
  bool removed = false;
  for (const auto& e : *table) {
    if (e.ifindex != *idx || !sameAddress(e.prefix.address, vip_.address.address)) continue;
    auto r = table_->remove(request(*idx, e.prefix));
    if (!r && r.error().code != ErrorCode::kNotFound) {
      return fail(r.error().code, r.error().message + hint(r.error()));
    }
    removed = removed || r.has_value();
  }
  held_ = false;
  seen_ = false;
  if (removed) log(LogLevel::kNotice, "VIP " + where() + " removed");
  return removed;
}

void VipResource::start(Done done) {
  const bool was_held = held_;
  Result<void> r = ensure(/*from_monitor=*/false);
  if (r && !was_held && on_change_) on_change_(vip_, true);
  done(std::move(r));
}

void VipResource::stop(Done done) {
  const bool was_held = held_;
  Result<bool> r = release();
  if (!r) {
    done(fail(r.error()));
    return;
  }
  if ((was_held || *r) && on_change_) on_change_(vip_, false);
  done(Result<void>());
}

void VipResource::monitor(Done done) {
  // Nothing is held, so nothing can have drifted.
  if (!held_) {
    done(Result<void>());
    return;
  }
  done(ensure(/*from_monitor=*/true));
}

nlohmann::json VipResource::describe() const {
  return {{"address", vip_.address.toString()}, {"interface", vip_.interface}};
}

bool VipResource::present() const {
  auto idx = ifindex();
  if (!idx) return *(seen_ = false);
  auto table = table_->addresses(vip_.address.address.family);
  if (!table) {
    log(LogLevel::kWarning, "VIP " + where() + ": " + table.error().message);
    return false;
  }
  seen_ = std::any_of(table->begin(), table->end(), [&](const rtnl::AddressEntry& e) {
    return e.ifindex == *idx && sameAddress(e.prefix.address, vip_.address.address);
  });
  return *seen_;
}

Result<void> validateVip(const config::Vip& vip) {
  if (vip.label.empty()) return {};
  if (vip.address.address.family != Family::kInet) {
    return fail(ErrorCode::kInvalidArgument,
                "VIP " + vip.address.toString() + ": labels are for IPv4 addresses only");
  }
  if (auto r = rtnl::validateLabel(vip.label, vip.interface); !r) {
    return fail(r.error().code, "VIP " + vip.address.toString() + ": " + r.error().message);
  }
  return {};
}

Result<std::vector<std::unique_ptr<Resource>>> makeVipResources(const config::Config& cfg,
                                                                std::string_view node_name,
                                                                const AddressTableFactory& open,
                                                                VipLog log) {
  std::vector<std::unique_ptr<Resource>> out;
  const config::Node* node = cfg.findNode(node_name);
  if (node == nullptr) {
    return fail(ErrorCode::kNotFound,
                "node " + std::string(node_name) + " is not a [[node]] in " + cfg.source);
  }
  std::shared_ptr<AddressTable> table;
  for (const config::Vip& vip : cfg.vips) {
    const bool mine = std::find(node->interfaces.begin(), node->interfaces.end(), vip.interface) !=
                      node->interfaces.end();
    if (!mine) {
      if (log) {
        log(LogLevel::kInfo, "VIP " + vip.address.toString() + " on " + vip.interface +
                                 " is not for this node (node.interfaces does not list " +
                                 vip.interface + ") node=" + std::string(node_name));
      }
      continue;
    }
    if (auto valid = validateVip(vip); !valid) return fail(valid.error());
    if (!table) {
      auto t = open();
      if (!t) return fail(t.error());
      table = std::move(*t);
    }
    out.push_back(std::make_unique<VipResource>(vip, table, log));
  }
  return out;
}

}  // namespace tandem::resources
