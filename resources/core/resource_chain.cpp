#include "core/resource_chain.h"

namespace tandem::resources {

ResourceChain::ResourceChain(loop::Dispatcher& dispatcher,
                             std::vector<std::unique_ptr<Resource>> resources)
    : dispatcher_(dispatcher), resources_(std::move(resources)) {
  timeout_ = dispatcher_.createTimer([this] {
    if (!in_flight_) return;
    const Resource& r = *resources_[index_];
    stepDone(token_, fail(ErrorCode::kTimeout, std::string(r.name()) + " did not answer within " +
                                                   formatDuration(r.timeout())));
  });
}

ResourceChain::~ResourceChain() = default;

void ResourceChain::startAll(Done done) {
  if (op_ != Op::kIdle) {
    done(fail(ErrorCode::kTryAgain, "the resource chain is busy"));
    return;
  }
  op_ = Op::kStart;
  index_ = 0;
  done_ = std::move(done);
  runStep();
}

void ResourceChain::stopAll(Done done) {
  if (op_ == Op::kStop || op_ == Op::kRollback) {
    // Already on the way down: answer both when it gets there.
    Done first = std::move(done_);
    done_ = [first = std::move(first), done = std::move(done)](Result<void> r) {
      if (first) first(r);
      done(r);
    };
    return;
  }
  if (in_flight_) {
    queued_stop_ = std::move(done);
    return;
  }
  op_ = Op::kStop;
  index_ = resources_.size();
  done_ = std::move(done);
  stop_result_ = Result<void>();
  runStep();
}

void ResourceChain::monitorAll(Done done) {
  if (op_ != Op::kIdle) {
    done(Result<void>());  // a start or stop is under way; the next pass will look
    return;
  }
  op_ = Op::kMonitor;
  index_ = 0;
  done_ = std::move(done);
  runStep();
}

void ResourceChain::reannounceAll() {
  for (auto& r : resources_) r->reannounce();
}

bool ResourceChain::anyPresent() const {
  for (const auto& r : resources_) {
    if (r->present()) return true;
  }
  return false;
}

void ResourceChain::runStep() {
  bool forward = op_ == Op::kStart || op_ == Op::kMonitor;
  if (forward && index_ >= resources_.size()) {
    finish(Result<void>());
    return;
  }
  if (!forward && index_ == 0) {
    if (op_ == Op::kRollback) {
      finish(fail(*rollback_cause_));
    } else {
      finish(stop_result_);
    }
    return;
  }
  size_t i = forward ? index_ : index_ - 1;
  Resource& r = *resources_[i];
  uint64_t token = ++token_;
  in_flight_ = true;
  index_ = forward ? index_ : index_ - 1;
  timeout_->arm(r.timeout());
  auto cb = [this, token](Result<void> res) { stepDone(token, std::move(res)); };
  switch (op_) {
    case Op::kStart:
      r.start(cb);
      break;
    case Op::kMonitor:
      r.monitor(cb);
      break;
    case Op::kStop:
    case Op::kRollback:
      r.stop(cb);
      break;
    case Op::kIdle:
      break;
  }
}

void ResourceChain::stepDone(uint64_t token, Result<void> r) {
  if (token != token_ || !in_flight_) return;  // a late answer to a step we gave up on
  in_flight_ = false;
  timeout_->cancel();
  if (queued_stop_) {
    // Whatever the step did, the start is superseded: stop everything, this one included.
    bool include_current = op_ == Op::kStart;
    op_ = Op::kStop;
    index_ = include_current ? index_ + 1 : resources_.size();
    done_ = std::move(queued_stop_);
    queued_stop_ = nullptr;
    stop_result_ = Result<void>();
    runStep();
    return;
  }
  switch (op_) {
    case Op::kStart:
      if (!r) {
        // Undo what started, in reverse, then report why the start failed.
        rollback_cause_ = Error{r.error().code,
                                std::string(resources_[index_]->name()) + ": " + r.error().message};
        op_ = Op::kRollback;
        // index_ is the failed one: it may be half there, so it is stopped too.
        ++index_;
      } else {
        ++index_;
      }
      break;
    case Op::kMonitor:
      if (!r) {
        finish(fail(r.error().code,
                    std::string(resources_[index_]->name()) + ": " + r.error().message));
        return;
      }
      ++index_;
      break;
    case Op::kStop:
    case Op::kRollback:
      // Keep stopping the rest: a stop failure must not leave the others held.
      if (!r && stop_result_) {
        stop_result_ = fail(r.error().code,
                            std::string(resources_[index_]->name()) + ": " + r.error().message);
      }
      break;
    case Op::kIdle:
      return;
  }
  runStep();
}

void ResourceChain::finish(Result<void> r) {
  op_ = Op::kIdle;
  Done done = std::move(done_);
  done_ = nullptr;
  if (done) done(std::move(r));
}

}  // namespace tandem::resources
