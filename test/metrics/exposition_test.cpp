#include "metrics/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tandem::metrics {
namespace {

TEST(Exposition, CounterNamesItsFamilyWithoutTotalInOpenMetrics) {
  Exposition out(Format::kOpenMetrics);
  out.counter("tandem_takeovers", "Takeovers", 3);
  EXPECT_EQ(out.finish(),
            "# HELP tandem_takeovers Takeovers\n"
            "# TYPE tandem_takeovers counter\n"
            "tandem_takeovers_total 3\n"
            "# EOF\n");
}

TEST(Exposition, CounterNamesItsFamilyWithTotalInPrometheusText) {
  Exposition out(Format::kPrometheusText);
  out.counter("tandem_takeovers", "Takeovers", 3);
  EXPECT_EQ(out.finish(),
            "# HELP tandem_takeovers_total Takeovers\n"
            "# TYPE tandem_takeovers_total counter\n"
            "tandem_takeovers_total 3\n");
}

TEST(Exposition, UnitIsDeclaredInOpenMetricsOnly) {
  Exposition om(Format::kOpenMetrics);
  om.gauge("tandem_epoch_age_seconds", "Age", 1.5, "seconds");
  EXPECT_NE(om.finish().find("# UNIT tandem_epoch_age_seconds seconds\n"), std::string::npos);
  Exposition text(Format::kPrometheusText);
  text.gauge("tandem_epoch_age_seconds", "Age", 1.5, "seconds");
  EXPECT_EQ(text.finish().find("# UNIT"), std::string::npos);
}

TEST(Exposition, LabelValuesAreEscaped) {
  EXPECT_EQ(labelSet({{"vs", "a\"b\\c\nd"}}), R"({vs="a\"b\\c\nd"})");
  EXPECT_EQ(labelSet({}), "");
  EXPECT_EQ(labelSet({{"vs", "www"}, {"rs", "198.51.100.21:80"}}),
            R"({vs="www",rs="198.51.100.21:80"})");
}

TEST(Exposition, WithLabelAppendsToASetOrStartsOne) {
  EXPECT_EQ(withLabel(R"({vs="www"})", "direction", "in"), R"({vs="www",direction="in"})");
  EXPECT_EQ(withLabel("", "le", "+Inf"), R"({le="+Inf"})");
}

TEST(Exposition, HelpEscapesBackslashAndNewlineAndInOpenMetricsTheQuote) {
  Exposition out(Format::kPrometheusText);
  out.gauge("g", "a\\b\nc\"d", 0);
  EXPECT_NE(out.finish().find("# HELP g a\\\\b\\nc\"d\n"), std::string::npos);
  Exposition om(Format::kOpenMetrics);
  om.gauge("g", "a\"d", 0);
  EXPECT_NE(om.finish().find("# HELP g a\\\"d\n"), std::string::npos);
}

TEST(Exposition, BucketBoundsAreCanonicalNumbers) {
  Histogram h({0.5, 1, 10});
  Exposition out(Format::kOpenMetrics);
  out.family("x_seconds", Type::kHistogram, "h", "seconds");
  out.histogram("", h);
  const std::string text = out.finish();
  EXPECT_NE(text.find("x_seconds_bucket{le=\"0.5\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x_seconds_bucket{le=\"1.0\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x_seconds_bucket{le=\"10.0\"} 0\n"), std::string::npos) << text;
}

TEST(Exposition, NumbersAreShortestAndSpecialValuesSpelled) {
  Exposition out(Format::kPrometheusText);
  out.family("g", Type::kGauge, "h");
  out.sample("", 0.1);
  out.sample("", 1e21);
  out.sample("", std::numeric_limits<double>::quiet_NaN());
  out.sample("", std::numeric_limits<double>::infinity());
  out.sample("", -std::numeric_limits<double>::infinity());
  out.sample("", static_cast<uint64_t>(18446744073709551615ULL));
  out.sample("", static_cast<int64_t>(-3));
  EXPECT_EQ(out.finish(),
            "# HELP g h\n# TYPE g gauge\n"
            "g 0.1\ng 1e+21\ng NaN\ng +Inf\ng -Inf\ng 18446744073709551615\ng -3\n");
}

TEST(Exposition, HistogramBucketsAreCumulativeWithInfCountAndSum) {
  Histogram h({0.01, 0.1});
  h.observe(0.005);
  h.observe(0.01);  // on the bound: in the 0.01 bucket (le)
  h.observe(0.05);
  h.observe(3);
  Exposition out(Format::kOpenMetrics);
  out.family("tandem_check_duration_seconds", Type::kHistogram, "Checks", "seconds");
  out.histogram(labelSet({{"type", "tcp"}}), h);
  EXPECT_EQ(out.finish(),
            "# HELP tandem_check_duration_seconds Checks\n"
            "# TYPE tandem_check_duration_seconds histogram\n"
            "# UNIT tandem_check_duration_seconds seconds\n"
            "tandem_check_duration_seconds_bucket{type=\"tcp\",le=\"0.01\"} 2\n"
            "tandem_check_duration_seconds_bucket{type=\"tcp\",le=\"0.1\"} 3\n"
            "tandem_check_duration_seconds_bucket{type=\"tcp\",le=\"+Inf\"} 4\n"
            "tandem_check_duration_seconds_count{type=\"tcp\"} 4\n"
            "tandem_check_duration_seconds_sum{type=\"tcp\"} 3.065\n"
            "# EOF\n");
}

TEST(Histogram, IgnoresNaN) {
  Histogram h(Histogram::lagBounds());
  h.observe(std::nan(""));
  EXPECT_EQ(h.count(), 0u);
  h.observe(2.0);  // above every bound
  EXPECT_EQ(h.counts().back(), 1u);
}

TEST(Exposition, ContentTypes) {
  EXPECT_EQ(contentType(Format::kOpenMetrics),
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
  EXPECT_EQ(contentType(Format::kPrometheusText), "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace
}  // namespace tandem::metrics
