#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "common/result.h"

namespace tandem::corosync {

// Messages corosync refused for now (flow control, CS_ERR_TRY_AGAIN), kept in send order until
// it takes them. Bounded in count and bytes: a corosync that stays congested must surface as an
// error at send(), not as a daemon that grows without limit or drops frames it never mentions.
class OutboundQueue {
 public:
  struct Limits {
    size_t max_messages = 256;
    size_t max_bytes = 1 << 20;
  };

  explicit OutboundQueue(Limits limits) : limits_(limits) {}

  // Appends a copy, or fails with kTryAgain when either limit would be passed.
  [[nodiscard]] Result<void> push(std::span<const uint8_t> message);

  [[nodiscard]] bool empty() const { return messages_.empty(); }
  [[nodiscard]] size_t size() const { return messages_.size(); }
  [[nodiscard]] size_t bytes() const { return bytes_; }
  [[nodiscard]] const std::vector<uint8_t>& front() const { return messages_.front(); }
  void pop();
  // Empties the queue and says how many messages were in it, so the caller can report them.
  [[nodiscard]] size_t clear();

 private:
  Limits limits_;
  std::deque<std::vector<uint8_t>> messages_;
  size_t bytes_ = 0;
};

}  // namespace tandem::corosync
