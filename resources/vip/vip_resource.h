#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "config/config.h"
#include "core/resource.h"
#include "vip/address_table.h"

namespace tandem::resources {

using VipLog = LogSink;
// Told when a VIP's resource takes it (added, or found in place and adopted: true) or lets it go
// (removed: false). A VIP restored by monitor after a removal behind tandem's back was held
// throughout, and is not told.
using OnVipChange = std::function<void(const config::Vip& vip, bool added)>;

// What start/monitor find for a VIP in the kernel's table, and what they do about it. Pure.
struct VipPlan {
  enum class Kind {
    kAdopt,     // already on its interface as configured: write nothing
    kAdd,       // absent: add it
    kReplace,   // on its interface with another prefix, or IPv6 DAD failed: remove, then add
    kConflict,  // on another interface: refuse, the operator must sort it out
  };
  Kind kind = Kind::kAdd;
  std::optional<rtnl::AddressEntry> found;  // the kernel's entry for the address, if any
};

VipPlan planVip(const config::Vip& vip, uint32_t ifindex,
                const std::vector<rtnl::AddressEntry>& table);

// One VIP on its interface. start adds it (adopting one that is already there, so a restarted
// daemon does not flap it), stop removes it (absent is fine), monitor puts it back if it was
// removed behind tandem's back, and present() asks the kernel.
class VipResource final : public Resource {
 public:
  VipResource(config::Vip vip, std::shared_ptr<AddressTable> table, VipLog log,
              OnVipChange on_change = {});

  std::string_view name() const override { return name_; }
  void start(Done done) override;
  void stop(Done done) override;
  void monitor(Done done) override;
  bool present() const override;
  bool lastSeenPresent() const override { return seen_.value_or(held_); }
  nlohmann::json describe() const override;

  const config::Vip& vip() const { return vip_; }

 private:
  Result<void> ensure(bool from_monitor);
  // Removes the address; true when there was one to remove.
  Result<bool> release();
  Result<uint32_t> ifindex() const;
  rtnl::AddressRequest request(uint32_t ifindex, const IpPrefix& prefix) const;
  std::string where() const;  // "198.51.100.50/24 on eth0"
  void log(LogLevel level, const std::string& line) const;

  config::Vip vip_;
  std::shared_ptr<AddressTable> table_;
  VipLog log_;
  OnVipChange on_change_;
  std::string name_;
  bool held_ = false;  // started and not stopped since
  // What the kernel's table last said of this VIP (present(), or a start, stop or monitor that
  // succeeded); unset before the first look.
  mutable std::optional<bool> seen_;
};

// What the kernel would refuse of a [[vip]] before any request: a label on an IPv6 address, or
// one the kernel does not accept for the interface.
[[nodiscard]] Result<void> validateVip(const config::Vip& vip);

// Opens the kernel's address table when the first VIP needs it.
using AddressTableFactory = std::function<Result<std::shared_ptr<AddressTable>>()>;

// The VIPs this node can hold (those on an interface its [[node]] lists), in config order,
// sharing one address table. Fails when the table cannot be opened or a VIP is malformed.
Result<std::vector<std::unique_ptr<Resource>>> makeVipResources(const config::Config& cfg,
                                                                std::string_view node_name,
                                                                const AddressTableFactory& open,
                                                                VipLog log);

}  // namespace tandem::resources
