#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tandemd/logger.h"

namespace tandem::fakes {

// Keeps every line, whatever the level, and remembers the level the daemon asked for.
class FakeLogger final : public tandemd::Logger {
 public:
  struct Line {
    tandemd::LogLevel level;
    std::string text;
  };

  void log(tandemd::LogLevel level, std::string_view line) override {
    lines_.push_back(Line{level, std::string(line)});
  }
  void setLevel(tandemd::LogLevel level) override { level_ = level; }

  const std::vector<Line>& lines() const { return lines_; }
  tandemd::LogLevel level() const { return level_; }
  // Lines at level containing text.
  size_t count(tandemd::LogLevel level, std::string_view text) const {
    size_t n = 0;
    for (const auto& l : lines_) {
      n += (l.level == level && l.text.find(text) != std::string::npos) ? 1 : 0;
    }
    return n;
  }

 private:
  std::vector<Line> lines_;
  tandemd::LogLevel level_ = tandemd::LogLevel::kInfo;
};

}  // namespace tandem::fakes
