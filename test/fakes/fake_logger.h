#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "platform/logger.h"

namespace tandem::fakes {

// Keeps every line, whatever the level, and remembers the level the daemon asked for.
class FakeLogger final : public platform::Logger {
 public:
  struct Line {
    platform::LogLevel level;
    std::string text;
  };

  void log(platform::LogLevel level, std::string_view line) override {
    lines_.push_back(Line{level, std::string(line)});
  }
  void setLevel(platform::LogLevel level) override { level_ = level; }
  void event(const JournalEvent& e) override { events_.push_back(e); }
  const std::vector<JournalEvent>& events() const { return events_; }

  const std::vector<Line>& lines() const { return lines_; }
  platform::LogLevel level() const { return level_; }
  // Lines at level containing text.
  size_t count(platform::LogLevel level, std::string_view text) const {
    size_t n = 0;
    for (const auto& l : lines_) {
      n += (l.level == level && l.text.find(text) != std::string::npos) ? 1 : 0;
    }
    return n;
  }

 private:
  std::vector<Line> lines_;
  std::vector<JournalEvent> events_;
  platform::LogLevel level_ = platform::LogLevel::kInfo;
};

}  // namespace tandem::fakes
