#include "director/route_metrics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tandem::director {

namespace {

using nlohmann::json;

struct RouteSeries {
  std::string labels;  // {vs="web",route="198.51.100.10/32"}
  const json* entry;
};

std::optional<uint64_t> counterOf(const json& entry, const char* key) {
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<uint64_t>();
}

bool isTrue(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

bool hasError(const json& object) {
  auto it = object.find("error");
  return it != object.end() && !it->is_null();
}

}  // namespace

void writeRouteMetrics(metrics::Exposition& out, const json& routes) {
  using metrics::labelSet;
  using metrics::Type;
  if (!routes.is_object()) return;
  std::vector<RouteSeries> series;
  if (auto services = routes.find("services"); services != routes.end() && services->is_array()) {
    for (const json& s : *services) {
      if (!s.is_object()) continue;
      auto name = s.find("service");
      auto route = s.find("route");
      if (name == s.end() || !name->is_string() || route == s.end() || !route->is_string()) {
        continue;
      }
      series.push_back({labelSet({{"vs", name->get_ref<const std::string&>()},
                                  {"route", route->get_ref<const std::string&>()}}),
                        &s});
    }
  }
  // An unusable route interface keeps every route out, whatever each service's health says.
  const bool table_error = hasError(routes);

  out.family("tandem_route_held", Type::kGauge,
             "1 while this director holds the service's host route in the kernel");
  for (const RouteSeries& r : series) out.sample(r.labels, isTrue(*r.entry, "held") ? 1.0 : 0.0);
  out.family("tandem_route_error", Type::kGauge,
             "1 while the route cannot be written as decided (its last change failed, or the "
             "route interface is unusable)");
  for (const RouteSeries& r : series) {
    out.sample(r.labels, table_error || hasError(*r.entry) ? 1.0 : 0.0);
  }
  const std::pair<const char*, const char*> counters[] = {
      {"withdrawals", "Withdrawals of the route because the service was unhealthy"},
      {"absorbed_flaps", "Failures of the service absorbed by the hold-down, no withdrawal each"},
      {"repairs", "Times the route was put back after a removal behind tandem's back"}};
  for (const auto& [key, help] : counters) {
    out.family(std::string("tandem_route_") + key, Type::kCounter, help);
    for (const RouteSeries& r : series) {
      if (auto v = counterOf(*r.entry, key)) out.sample(r.labels, *v);
    }
  }
}

}  // namespace tandem::director
