#include "corosync/outbound_queue.h"

#include <string>

namespace tandem::corosync {

Result<void> OutboundQueue::push(std::span<const uint8_t> message) {
  if (messages_.size() >= limits_.max_messages || bytes_ + message.size() > limits_.max_bytes) {
    return fail(ErrorCode::kTryAgain,
                "send queue full (" + std::to_string(messages_.size()) + " messages, " +
                    std::to_string(bytes_) + " bytes queued; limits " +
                    std::to_string(limits_.max_messages) + " messages, " +
                    std::to_string(limits_.max_bytes) +
                    " bytes): corosync has applied flow control for too long");
  }
  messages_.emplace_back(message.begin(), message.end());
  bytes_ += message.size();
  return {};
}

void OutboundQueue::pop() {
  bytes_ -= messages_.front().size();
  messages_.pop_front();
}

size_t OutboundQueue::clear() {
  size_t n = messages_.size();
  messages_.clear();
  bytes_ = 0;
  return n;
}

}  // namespace tandem::corosync
