#include "metrics/exposition.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace tandem::metrics {
namespace {

void appendEscaped(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

std::string_view typeName(Type type) {
  switch (type) {
    case Type::kGauge:
      return "gauge";
    case Type::kCounter:
      return "counter";
    case Type::kHistogram:
      return "histogram";
  }
  return "unknown";
}

// HELP text escapes backslash and newline (both formats), and in OpenMetrics the double quote.
void appendHelp(std::string& out, std::string_view help, bool quote) {
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

void appendDouble(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, ec == std::errc() ? static_cast<size_t>(end - buf) : 0);
  }
}

}  // namespace

std::string_view contentType(Format format) {
  return format == Format::kOpenMetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

std::string labelSet(std::initializer_list<Label> labels) {
  if (labels.size() == 0) return {};
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += name;
    out += "=\"";
    appendEscaped(out, value);
    out += '"';
  }
  out += '}';
  return out;
}

std::string withLabel(std::string_view label_set, std::string_view name, std::string_view value) {
  std::string out;
  out.reserve(label_set.size() + name.size() + value.size() + 5);
  if (label_set.empty()) {
    out += '{';
  } else {
    out.append(label_set.substr(0, label_set.size() - 1));  // without the closing brace
    out += ',';
  }
  out += name;
  out += "=\"";
  appendEscaped(out, value);
  out += "\"}";
  return out;
}

Exposition::Exposition(Format format, size_t reserve) : format_(format) { out_.reserve(reserve); }

void Exposition::family(std::string_view name, Type type, std::string_view help,
                        std::string_view unit) {
  type_ = type;
  family_.assign(name);
  prefix_ = type == Type::kCounter ? family_ + "_total" : family_;
  // Prometheus's text format names a counter's family with its samples' `_total`.
  const bool counter_total = type == Type::kCounter && format_ == Format::kPrometheusText;
  const std::string declared = counter_total ? family_ + "_total" : family_;
  out_ += "# HELP ";
  out_ += declared;
  out_ += ' ';
  appendHelp(out_, help, format_ == Format::kOpenMetrics);
  out_ += '\n';
  out_ += "# TYPE ";
  out_ += declared;
  out_ += ' ';
  out_ += typeName(type);
  out_ += '\n';
  if (format_ == Format::kOpenMetrics && !unit.empty()) {
    out_ += "# UNIT ";
    out_ += declared;
    out_ += ' ';
    out_ += unit;
    out_ += '\n';
  }
}

// name{labels} value\n in one resize: a scrape of a large table is tens of thousands of these.
void Exposition::appendLine(std::string_view label_set, std::string_view number) {
  const size_t at = out_.size();
  out_.resize(at + prefix_.size() + label_set.size() + number.size() + 2);
  char* p = out_.data() + at;
  std::memcpy(p, prefix_.data(), prefix_.size());
  p += prefix_.size();
  std::memcpy(p, label_set.data(), label_set.size());
  p += label_set.size();
  *p++ = ' ';
  std::memcpy(p, number.data(), number.size());
  p += number.size();
  *p = '\n';
}

void Exposition::sample(std::string_view label_set, double value) {
  std::string number;
  appendDouble(number, value);
  appendLine(label_set, number);
}

void Exposition::sample(std::string_view label_set, uint64_t value) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  appendLine(label_set,
             std::string_view(buf, ec == std::errc() ? static_cast<size_t>(end - buf) : 0));
}

void Exposition::sample(std::string_view label_set, int64_t value) {
  if (value < 0) {
    sample(label_set, static_cast<double>(value));
  } else {
    sample(label_set, static_cast<uint64_t>(value));
  }
}

void Exposition::histogram(std::string_view label_set, const Histogram& h) {
  const std::string family = family_;
  uint64_t cumulative = 0;
  std::string le;
  char buf[24];
  auto number = [&buf](uint64_t v) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return std::string_view(buf, ec == std::errc() ? static_cast<size_t>(end - buf) : 0);
  };
  prefix_ = family + "_bucket";
  for (size_t i = 0; i <= h.bounds().size(); ++i) {
    cumulative += h.counts()[i];
    le.clear();
    if (i < h.bounds().size()) {
      // A bucket's bound as OpenMetrics writes a canonical number: "1.0", not "1".
      appendDouble(le, h.bounds()[i]);
      if (le.find_first_of(".eE") == std::string::npos) le += ".0";
    } else {
      le = "+Inf";
    }
    appendLine(withLabel(label_set, "le", le), number(cumulative));
  }
  prefix_ = family + "_count";
  appendLine(label_set, number(h.count()));
  prefix_ = family + "_sum";
  std::string sum;
  appendDouble(sum, h.sum());
  appendLine(label_set, sum);
  prefix_ = family;
}

void Exposition::gauge(std::string_view name, std::string_view help, double value,
                       std::string_view unit) {
  family(name, Type::kGauge, help, unit);
  sample("", value);
}

void Exposition::counter(std::string_view name, std::string_view help, uint64_t value,
                         std::string_view unit) {
  family(name, Type::kCounter, help, unit);
  sample("", value);
}

std::string Exposition::finish() {
  if (format_ == Format::kOpenMetrics) out_ += "# EOF\n";
  return std::move(out_);
}

}  // namespace tandem::metrics
