// The route series (conf/metrics.md, "Routes") from the route subsystem's status: pure, on
// canned status documents.
#include "director/route_metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace tandem::director {
namespace {

using nlohmann::json;

std::string scrapeOf(const json& routes, metrics::Format format = metrics::Format::kOpenMetrics) {
  metrics::Exposition out(format);
  writeRouteMetrics(out, routes);
  return out.finish();
}

const json kRoutes = json::parse(R"({
  "mode": "active-backup", "table": 254, "protocol": 190, "interface": "tandem0", "metric": 0,
  "services": [
    {"service": "web", "route": "198.51.100.10/32", "held": true,
     "reason": "healthy: 2 of 2 real servers up", "withdrawals": 2, "repairs": 1,
     "absorbed_flaps": 0},
    {"service": "dns6", "route": "2001:db8::53/128", "held": false,
     "reason": "hold-down: healthy for 3s of 30s since its last failure", "withdrawals": 1,
     "repairs": 0, "absorbed_flaps": 4, "error": "Operation not permitted"}
  ]})");

TEST(RouteMetrics, EachRoutedServiceHasItsHeldStateErrorAndCounters) {
  EXPECT_EQ(scrapeOf(kRoutes),
            "# HELP tandem_route_held 1 while this director holds the service's host route in "
            "the kernel\n"
            "# TYPE tandem_route_held gauge\n"
            "tandem_route_held{vs=\"web\",route=\"198.51.100.10/32\"} 1\n"
            "tandem_route_held{vs=\"dns6\",route=\"2001:db8::53/128\"} 0\n"
            "# HELP tandem_route_error 1 while the route cannot be written as decided (its last "
            "change failed, or the route interface is unusable)\n"
            "# TYPE tandem_route_error gauge\n"
            "tandem_route_error{vs=\"web\",route=\"198.51.100.10/32\"} 0\n"
            "tandem_route_error{vs=\"dns6\",route=\"2001:db8::53/128\"} 1\n"
            "# HELP tandem_route_withdrawals Withdrawals of the route because the service was "
            "unhealthy\n"
            "# TYPE tandem_route_withdrawals counter\n"
            "tandem_route_withdrawals_total{vs=\"web\",route=\"198.51.100.10/32\"} 2\n"
            "tandem_route_withdrawals_total{vs=\"dns6\",route=\"2001:db8::53/128\"} 1\n"
            "# HELP tandem_route_absorbed_flaps Failures of the service absorbed by the "
            "hold-down, no withdrawal each\n"
            "# TYPE tandem_route_absorbed_flaps counter\n"
            "tandem_route_absorbed_flaps_total{vs=\"web\",route=\"198.51.100.10/32\"} 0\n"
            "tandem_route_absorbed_flaps_total{vs=\"dns6\",route=\"2001:db8::53/128\"} 4\n"
            "# HELP tandem_route_repairs Times the route was put back after a removal behind "
            "tandem's back\n"
            "# TYPE tandem_route_repairs counter\n"
            "tandem_route_repairs_total{vs=\"web\",route=\"198.51.100.10/32\"} 1\n"
            "tandem_route_repairs_total{vs=\"dns6\",route=\"2001:db8::53/128\"} 0\n"
            "# EOF\n");
}

TEST(RouteMetrics, CountersEndInTotalInPrometheusTextToo) {
  const std::string text = scrapeOf(kRoutes, metrics::Format::kPrometheusText);
  EXPECT_NE(text.find("# TYPE tandem_route_repairs_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("tandem_route_repairs_total{vs=\"web\",route=\"198.51.100.10/32\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
}

TEST(RouteMetrics, AnUnusableInterfaceIsAnErrorOfEveryRoute) {
  json routes = kRoutes;
  routes["error"] = "interface tandem0 does not exist";
  const std::string text = scrapeOf(routes);
  EXPECT_NE(text.find("tandem_route_error{vs=\"web\",route=\"198.51.100.10/32\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tandem_route_error{vs=\"dns6\",route=\"2001:db8::53/128\"} 1\n"),
            std::string::npos);
}

TEST(RouteMetrics, NoRoutedServiceMeansNoRouteSeries) {
  for (const json& routes : {json(nullptr), json("routes"), json::array(), json(1)}) {
    EXPECT_EQ(scrapeOf(routes), "# EOF\n") << routes.dump();
  }
}

// A label value is escaped, an entry without a service name or route is skipped, a counter
// that is not an unsigned integer is left out: nothing throws.
TEST(RouteMetrics, MistypedEntriesAreSkippedNeverThrown) {
  const json routes = json::parse(R"({
    "error": null,
    "services": [
      "web", null, [1], {},
      {"service": 5, "route": "198.51.100.9/32", "held": true},
      {"service": "a\"b", "route": "198.51.100.10/32", "held": "yes", "withdrawals": -1,
       "repairs": 1.5, "absorbed_flaps": "many", "error": null}
    ]})");
  std::string text;
  ASSERT_NO_THROW(text = scrapeOf(routes));
  const std::string labels = "{vs=\"a\\\"b\",route=\"198.51.100.10/32\"}";
  EXPECT_NE(text.find("tandem_route_held" + labels + " 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("tandem_route_error" + labels + " 0\n"), std::string::npos);
  EXPECT_EQ(text.find("_total{"), std::string::npos);
  EXPECT_EQ(text.find("198.51.100.9/32"), std::string::npos);

  json no_list = kRoutes;
  no_list["services"] = {{"web", true}};
  ASSERT_NO_THROW(text = scrapeOf(no_list));
  EXPECT_EQ(text.find("{vs="), std::string::npos);
}

}  // namespace
}  // namespace tandem::director
