#include "vip/vip_subsystem.h"

#include <algorithm>

namespace tandem::resources {

namespace {

// What the address resource depends on; the rest of a [[vip]] is the announcer's.
bool sameAddress(const config::Vip& a, const config::Vip& b) {
  return a.address == b.address && a.interface == b.interface && a.label == b.label;
}

}  // namespace

VipSubsystem::VipSubsystem(VipDeps deps, std::string self)
    : deps_(std::move(deps)), self_(std::move(self)) {}

Result<std::vector<config::Vip>> VipSubsystem::mine(const config::Config& next) const {
  std::vector<config::Vip> out;
  const config::Node* node = next.findNode(self_);
  if (node == nullptr) {
    return fail(ErrorCode::kNotFound, "node " + self_ + " is not a [[node]] in " + next.source);
  }
  for (const config::Vip& vip : next.vips) {
    if (std::find(node->interfaces.begin(), node->interfaces.end(), vip.interface) ==
        node->interfaces.end()) {
      continue;
    }
    if (auto valid = validateVip(vip); !valid) return fail(valid.error());
    out.push_back(vip);
  }
  return out;
}

Result<void> VipSubsystem::prepare(const config::Config& next, const config::Config* running) {
  (void)running;
  auto vips = mine(next);
  if (!vips) return fail(vips.error());
  if (!vips->empty() && !table_) {
    auto t = deps_.open_table();
    if (!t) return fail(t.error());
    table_ = std::move(*t);
  }
  prepared_ = std::move(*vips);
  return {};
}

void VipSubsystem::configure(const config::Config& next, const config::Config* running,
                             const config::ReloadDiff& diff) {
  (void)next;
  (void)running;
  (void)diff;
  std::vector<Entry> kept;
  for (const config::Vip& vip : prepared_) {
    auto old = std::find_if(entries_.begin(), entries_.end(),
                            [&](const Entry& e) { return sameAddress(e.vip, vip); });
    Entry e;
    e.vip = vip;
    if (old != entries_.end()) {
      e.address = old->address;
      if (old->vip == vip) e.announcer = old->announcer;
    } else {
      e.address = std::make_shared<VipResource>(vip, table_, deps_.log, deps_.on_change);
    }
    if (!e.announcer) {
      e.announcer = std::make_shared<announce::AnnounceResource>(
          vip, deps_.dispatcher, deps_.sockets, deps_.log, deps_.forwards);
    }
    kept.push_back(std::move(e));
  }
  for (const Entry& old : entries_) {
    const bool still = std::any_of(kept.begin(), kept.end(),
                                   [&](const Entry& k) { return k.announcer == old.announcer; });
    if (!still) frames_retired_ += old.announcer->framesSent();
  }
  entries_ = std::move(kept);
  prepared_.clear();
}

std::vector<HeldResource> VipSubsystem::held() {
  std::vector<HeldResource> out;
  for (const Entry& e : entries_) out.push_back({Stage::kVips, e.address});
  for (const Entry& e : entries_) out.push_back({Stage::kAnnounce, e.announcer});
  return out;
}

void VipSubsystem::writeMetrics(metrics::Exposition& out) const {
  using metrics::labelSet;
  using metrics::Type;
  uint64_t frames = frames_retired_;
  size_t held = 0;
  out.family("tandem_vip_held", Type::kGauge, "1 while this director holds the VIP");
  for (const Entry& e : entries_) {
    const bool present = e.address->lastSeenPresent();
    held += present ? 1 : 0;
    out.sample(labelSet({{"vip", e.vip.address.toString()}}), present ? 1.0 : 0.0);
    frames += e.announcer->framesSent();
  }
  out.gauge("tandem_vips_held", "How many VIPs this director holds", static_cast<double>(held));
  out.counter("tandem_announcements", "Gratuitous ARPs and unsolicited NAs sent", frames);
  out.family("tandem_vip_neighbours_verified", Type::kGauge,
             "Neighbours that answered for the VIP with this director's MAC at the last check");
  for (const Entry& e : entries_) {
    out.sample(labelSet({{"vip", e.vip.address.toString()}}),
               static_cast<double>(e.announcer->neighboursVerified()));
  }
}

}  // namespace tandem::resources
