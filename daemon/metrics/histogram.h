#pragma once

#include <cstdint>
#include <vector>

// A histogram with fixed bucket bounds, as Prometheus keeps one: a count per bucket (not
// cumulative here; the exposition adds them up), the total count and the sum of what was
// observed. Pure value type.
namespace tandem::metrics {

class Histogram {
 public:
  // bounds: the buckets' upper bounds, ascending; +Inf is implied.
  explicit Histogram(std::vector<double> bounds);

  void observe(double value);

  const std::vector<double>& bounds() const { return bounds_; }
  // counts()[i]: observations in (bounds[i-1], bounds[i]]; the last: those above every bound.
  const std::vector<uint64_t>& counts() const { return counts_; }
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

  // 1 ms to 10 s, for checks; 1 ms to 1 s, for the loop's lag.
  static std::vector<double> checkBounds();
  static std::vector<double> lagBounds();

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  double sum_ = 0;
};

}  // namespace tandem::metrics
