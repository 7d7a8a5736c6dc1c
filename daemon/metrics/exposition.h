#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "metrics/histogram.h"

// The text a scrape returns, written family by family: OpenMetrics 1.0
// (application/openmetrics-text) or, for a scraper that does not ask for it, Prometheus's text
// format 0.0.4. The two differ in where a counter's `_total` goes (OpenMetrics names the family
// without it), in `# UNIT` and in the closing `# EOF`; the writer hides that. Pure: no clock,
// no socket. Built for a large table: labels that repeat (a real server's) are rendered once by
// the caller (labelSet) and appended as text, numbers are written with std::to_chars.
namespace tandem::metrics {

enum class Format { kOpenMetrics, kPrometheusText };
enum class Type { kGauge, kCounter, kHistogram };

// The content type of each format, for the Content-Type header.
std::string_view contentType(Format format);

// {name="value",...} with the values escaped (backslash, double quote, newline); "" for none.
using Label = std::pair<std::string_view, std::string_view>;
std::string labelSet(std::initializer_list<Label> labels);
// label set + one more label (a histogram's le, a direction): the set's text with it appended.
std::string withLabel(std::string_view label_set, std::string_view name, std::string_view value);

class Exposition {
 public:
  // reserve: the size the text will likely reach (the last scrape's), so that a large table
  // is not copied over and over as the text grows.
  explicit Exposition(Format format, size_t reserve = 0);

  // Starts a family. name: without `_total` for a counter; unit: "seconds", "bytes" or "" (the
  // name must end in it, as OpenMetrics requires).
  void family(std::string_view name, Type type, std::string_view help, std::string_view unit = {});
  // A sample of the current gauge or counter family; label_set from labelSet() ("" for none).
  void sample(std::string_view label_set, double value);
  void sample(std::string_view label_set, uint64_t value);
  void sample(std::string_view label_set, int64_t value);
  // A whole histogram sample (its buckets, count and sum) of the current histogram family.
  void histogram(std::string_view label_set, const Histogram& h);

  // Shorthands: a family with one unlabelled sample.
  void gauge(std::string_view name, std::string_view help, double value,
             std::string_view unit = {});
  void counter(std::string_view name, std::string_view help, uint64_t value,
               std::string_view unit = {});

  // The text, with `# EOF` for OpenMetrics. The writer is spent afterwards.
  std::string finish();
  size_t size() const { return out_.size(); }

 private:
  void appendLine(std::string_view label_set, std::string_view number);

  Format format_;
  std::string out_;
  std::string family_;  // the current family's name
  std::string prefix_;  // what its samples' lines begin with (a counter's: with _total)
  Type type_ = Type::kGauge;
};

}  // namespace tandem::metrics
