#include "ipvs/ipvs_plan.h"

#include <linux/ip_vs.h>

#include <algorithm>
#include <map>

namespace tandem::resources::ipvs {

namespace {

const ServiceState* findService(const std::map<ServiceKey, const ServiceState*>& index,
                                const ServiceKey& key) {
  auto it = index.find(key);
  return it == index.end() ? nullptr : it->second;
}

// Destinations by key; a service has a handful, so a sorted vector beats a map.
std::vector<const Destination*> sortedDests(const ServiceState& s) {
  std::vector<const Destination*> v;
  v.reserve(s.destinations.size());
  for (const auto& d : s.destinations) v.push_back(&d.dest);
  auto by_key = [](const Destination* a, const Destination* b) { return a->key < b->key; };
  // Mostly sorted already (dumps and desiredTable are): checking is the cheaper half.
  if (!std::is_sorted(v.begin(), v.end(), by_key)) std::sort(v.begin(), v.end(), by_key);
  return v;
}

// 0 and the whole address are one netmask: the codec writes 0 as 255.255.255.255 (or /128),
// what ipvsadm sends, and reads either back as 0.
uint32_t netmaskOf(const Service& s) {
  const uint32_t full = s.key.family == Family::kInet6 ? 128 : 0xffffffffu;
  return s.netmask == full ? 0 : s.netmask;
}

Op serviceOp(Op::Kind kind, const Service& s) { return Op{kind, s, std::nullopt}; }
Op destOp(Op::Kind kind, const Service& s, const Destination& d) { return Op{kind, s, d}; }

void planDests(const ServiceState& want, const ServiceState* have, std::vector<Op>& ops) {
  const Service& svc = want.service;
  const auto wanted = sortedDests(want);
  if (have == nullptr) {
    for (const Destination* d : wanted) ops.push_back(destOp(Op::Kind::kAddDest, svc, *d));
    return;
  }
  const auto present = sortedDests(*have);
  std::vector<const Destination*> gone;
  auto w = wanted.begin();
  auto p = present.begin();
  while (w != wanted.end() || p != present.end()) {
    if (p == present.end() || (w != wanted.end() && (*w)->key < (*p)->key)) {
      ops.push_back(destOp(Op::Kind::kAddDest, svc, **w));
      ++w;
    } else if (w == wanted.end() || (*p)->key < (*w)->key) {
      gone.push_back(*p);
      ++p;
    } else {
      const Destination& a = **w;
      const Destination& b = **p;
      if (a.family != b.family) {
        ops.push_back(destOp(Op::Kind::kDelDest, svc, b));
        ops.push_back(destOp(Op::Kind::kAddDest, svc, a));
      } else if (!(a == b)) {
        ops.push_back(destOp(Op::Kind::kEditDest, svc, a));
      }
      ++w;
      ++p;
    }
  }
  for (const Destination* d : gone) ops.push_back(destOp(Op::Kind::kDelDest, svc, *d));
}

}  // namespace

bool sameService(const Service& a, const Service& b) {
  constexpr uint32_t kBookkeeping = IP_VS_SVC_F_HASHED;
  return a.key == b.key && a.scheduler == b.scheduler &&
         (a.flags & ~kBookkeeping) == (b.flags & ~kBookkeeping) && a.timeout_s == b.timeout_s &&
         netmaskOf(a) == netmaskOf(b) && a.pe_name == b.pe_name;
}

std::vector<Op> plan(const Table& desired, const Table& actual, bool manage_all,
                     const std::set<ServiceKey>& retired) {
  std::vector<Op> ops;
  Planner(desired, actual, manage_all, retired).next(desired.services.size(), ops);
  return ops;
}

Planner::Planner(const Table& desired, const Table& actual, bool manage_all,
                 const std::set<ServiceKey>& retired)
    : manage_all_(manage_all), retired_(retired) {
  for (const auto& s : actual.services) have_.emplace(s.service.key, &s);
  for (const auto& s : desired.services) want_.emplace(s.service.key, &s);
  at_ = want_.begin();
}

bool Planner::next(size_t services, std::vector<Op>& ops) {
  if (done_) return true;
  for (size_t n = 0; n < services && at_ != want_.end(); ++n, ++at_) {
    const ServiceState* ws = at_->second;
    const ServiceState* hs = findService(have_, at_->first);
    if (hs == nullptr) {
      ops.push_back(serviceOp(Op::Kind::kAddService, ws->service));
    } else if (!sameService(ws->service, hs->service)) {
      ops.push_back(serviceOp(Op::Kind::kEditService, ws->service));
    }
    planDests(*ws, hs, ops);
  }
  if (at_ != want_.end()) return false;
  for (const auto& [key, hs] : have_) {
    if (want_.count(key) != 0) continue;
    if (manage_all_ || retired_.count(key) != 0) {
      ops.push_back(serviceOp(Op::Kind::kDelService, hs->service));
    }
  }
  done_ = true;
  return true;
}

void applyOp(Table& table, const Op& op) {
  auto& services = table.services;
  auto svc = std::lower_bound(
      services.begin(), services.end(), op.service.key,
      [](const ServiceState& s, const ServiceKey& k) { return s.service.key < k; });
  const bool have = svc != services.end() && svc->service.key == op.service.key;
  switch (op.kind) {
    case Op::Kind::kAddService:
    case Op::Kind::kEditService:
      if (have) {
        svc->service = op.service;
      } else {
        services.insert(svc, ServiceState{op.service, {}, {}});
      }
      return;
    case Op::Kind::kDelService:
      if (have) services.erase(svc);
      return;
    default:
      break;
  }
  if (!op.dest) return;
  if (!have) svc = services.insert(svc, ServiceState{op.service, {}, {}});
  auto& dests = svc->destinations;
  auto d =
      std::lower_bound(dests.begin(), dests.end(), op.dest->key,
                       [](const DestinationState& s, const DestKey& k) { return s.dest.key < k; });
  const bool has_dest = d != dests.end() && d->dest.key == op.dest->key;
  if (op.kind == Op::Kind::kDelDest) {
    if (has_dest) dests.erase(d);
  } else if (has_dest) {
    d->dest = *op.dest;
  } else {
    dests.insert(d, DestinationState{*op.dest, 0, 0, 0, {}});
  }
}

}  // namespace tandem::resources::ipvs
