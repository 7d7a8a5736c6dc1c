#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "platform/notifier.h"

namespace tandem::fakes {

// Records what the daemon tells the service manager, one message per notify() call, each
// split into its VAR=value assignments the way systemd reads them.
class FakeNotifier final : public platform::Notifier {
 public:
  using Message = std::map<std::string, std::string>;

  void notify(std::string_view state) override {
    Message m;
    size_t start = 0;
    while (start <= state.size()) {
      size_t end = state.find('\n', start);
      if (end == std::string_view::npos) end = state.size();
      std::string_view line = state.substr(start, end - start);
      if (size_t eq = line.find('='); eq != std::string_view::npos) {
        m[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
      }
      start = end + 1;
    }
    raw_.emplace_back(state);
    messages_.push_back(std::move(m));
  }

  const std::vector<Message>& messages() const { return messages_; }
  const std::vector<std::string>& raw() const { return raw_; }
  const Message& last() const { return messages_.back(); }
  // How many messages set name (e.g. "WATCHDOG").
  size_t count(const std::string& name) const {
    size_t n = 0;
    for (const auto& m : messages_) n += m.count(name);
    return n;
  }
  void clear() {
    messages_.clear();
    raw_.clear();
  }

 private:
  std::vector<Message> messages_;
  std::vector<std::string> raw_;
};

}  // namespace tandem::fakes
