#include "config/failback_override.h"

#include <gtest/gtest.h>

namespace tandem::config {
namespace {

using namespace std::chrono_literals;

TEST(FailbackOverride, ReadsTheThreePoliciesAndSaysThemBack) {
  EXPECT_EQ(*parseFailbackOverride("auto"), (FailbackSetting{FailbackPolicy::kAuto, 0ms}));
  EXPECT_EQ(*parseFailbackOverride("manual"), (FailbackSetting{FailbackPolicy::kManual, 0ms}));
  auto delayed = parseFailbackOverride("delayed:1m30s");
  ASSERT_TRUE(delayed);
  EXPECT_EQ(*delayed, (FailbackSetting{FailbackPolicy::kDelayed, 90s}));
  EXPECT_EQ(failbackText(*delayed), "delayed 90s");
  EXPECT_EQ(failbackText(*parseFailbackOverride("manual")), "manual");
}

TEST(FailbackOverride, RefusesWhatIsNoPolicyOrNoUsableDelayNamingTheValue) {
  for (const char* bad : {"", "Auto", "sometimes", "delayed", "delayed:", "delayed:soon",
                          "delayed:0s", "delayed:25h", "delayed5m", "auto "}) {
    auto r = parseFailbackOverride(bad);
    ASSERT_FALSE(r) << "\"" << bad << "\" was taken";
    EXPECT_EQ(r.error().message.rfind("failback override \"" + std::string(bad) + "\"", 0), 0u)
        << r.error().message;
    EXPECT_NE(r.error().message.find("use auto, manual or delayed:DURATION"), std::string::npos);
  }
}

TEST(FailbackOverride, ReplacesTheConfigsPolicyAndDelayOnlyWhenThereIsOne) {
  Config cfg;
  cfg.cluster.failback = FailbackPolicy::kDelayed;
  cfg.cluster.failback_delay = 5min;
  applyFailbackOverride(cfg, std::nullopt);
  EXPECT_EQ(failbackOf(cfg), (FailbackSetting{FailbackPolicy::kDelayed, 5min}));
  applyFailbackOverride(cfg, FailbackSetting{FailbackPolicy::kManual, 0ms});
  EXPECT_EQ(failbackOf(cfg), (FailbackSetting{FailbackPolicy::kManual, 0ms}));
}

}  // namespace
}  // namespace tandem::config
