#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/drain.h"
#include "common/result.h"

namespace tandem::cluster {

// The drained real servers, cluster wide. Pure. Ordered like maintenance mode: an operator's
// change takes a generation past every one seen (ClusterNode::nextGeneration), every heartbeat
// carries the set with its generation, and a node adopts a newer one from any peer. So a drain
// set on one director reaches every other, and a director that was down, or a new ACTIVE after
// a failover, has it from the first heartbeat it hears; STATE_DIR/drains keeps it across a
// restart of tandemd. Independent of the config: a reload keeps every drain.
class DrainBook {
 public:
  uint64_t generation() const { return generation_; }
  // In order, without duplicates.
  const std::vector<DrainTarget>& targets() const { return targets_; }
  bool drained(const DrainTarget& t) const;

  // An operator drains (on) or enables (off) t under generation, which must be past
  // generation(). False when nothing changes (the generation stays); fails (invalid-argument)
  // for a drain past kMaxDrains.
  [[nodiscard]] Result<bool> set(const DrainTarget& t, bool on, uint64_t generation);
  // A peer's set: taken when its generation is newer, or equal with other targets (two nodes
  // that picked one generation in the same millisecond: the greater set wins on both). True
  // when taken.
  bool adopt(uint64_t generation, std::vector<DrainTarget> targets);

  // STATE_DIR/drains: "generation N" then one DrainTarget::toString() per line.
  std::string serialize() const;
  // What serialize wrote. A line that is not a drain fails naming its line number.
  [[nodiscard]] static Result<DrainBook> parse(std::string_view text);

 private:
  uint64_t generation_ = 0;
  std::vector<DrainTarget> targets_;
};

}  // namespace tandem::cluster
