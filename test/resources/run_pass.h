#pragma once

#include <optional>

#include "fakes/sim_dispatcher.h"
#include "ipvs/reconciler.h"

namespace tandem::fakes {

// Runs one pass of rec to its end on simulated time, for tests that look at its outcome: the
// fake kernel answers from the loop, so the pass completes within advance(0 ms).
inline Result<resources::ipvs::ReconcileReport> runPass(
    SimDispatcher& sim, resources::ipvs::Reconciler& rec, const resources::ipvs::Table& desired,
    bool manage_all, resources::ipvs::Pass pass = resources::ipvs::Pass::kVerify) {
  std::optional<Result<resources::ipvs::ReconcileReport>> out;
  rec.reconcile(desired, manage_all, pass,
                [&](Result<resources::ipvs::ReconcileReport> r) { out = std::move(r); });
  sim.advance(Millis(0));
  if (!out) return fail(ErrorCode::kInternal, "the pass did not complete");
  return std::move(*out);
}

inline Result<void> runTimeouts(SimDispatcher& sim, resources::ipvs::Reconciler& rec,
                                const resources::ipvs::Timeouts& want) {
  std::optional<Result<void>> out;
  rec.applyTimeouts(want, [&](Result<void> r) { out = std::move(r); });
  sim.advance(Millis(0));
  if (!out) return fail(ErrorCode::kInternal, "applyTimeouts did not complete");
  return std::move(*out);
}

}  // namespace tandem::fakes
