#include "core/resource_chain.h"

#include <algorithm>

namespace tandem::resources {

namespace {

ResourceChain::List share(std::vector<std::unique_ptr<Resource>> resources) {
  ResourceChain::List out;
  out.reserve(resources.size());
  for (auto& r : resources) out.push_back(std::shared_ptr<Resource>(std::move(r)));
  return out;
}

bool contains(const ResourceChain::List& list, const std::shared_ptr<Resource>& r) {
  return std::find(list.begin(), list.end(), r) != list.end();
}

}  // namespace

ResourceChain::ResourceChain(loop::Dispatcher& dispatcher, List resources)
    : dispatcher_(dispatcher), resources_(std::move(resources)) {
  timeout_ = dispatcher_.createTimer([this] {
    if (!in_flight_ || current_ == nullptr) return;
    stepDone(token_,
             fail(ErrorCode::kTimeout, std::string(current_->name()) + " did not answer within " +
                                           formatDuration(current_->timeout())));
  });
}

ResourceChain::ResourceChain(loop::Dispatcher& dispatcher,
                             std::vector<std::unique_ptr<Resource>> resources)
    : ResourceChain(dispatcher, share(std::move(resources))) {}

ResourceChain::~ResourceChain() = default;

void ResourceChain::startAll(Done done) {
  if (op_ != Op::kIdle) {
    done(fail(ErrorCode::kTryAgain, "the resource chain is busy"));
    return;
  }
  op_ = Op::kStart;
  index_ = 0;
  holding_ = true;  // from the first step on: a replace meanwhile must start what joins
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
  if (in_flight_ || op_ == Op::kReplace) {
    // A replace runs to its end (its steps are few and short); a start is cut short.
    if (queued_stop_) {
      Done first = std::move(queued_stop_);
      queued_stop_ = [first = std::move(first), done = std::move(done)](Result<void> r) {
        first(r);
        done(r);
      };
    } else {
      queued_stop_ = std::move(done);
    }
    return;
  }
  beginStop(std::move(done));
}

void ResourceChain::beginStop(Done done) {
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

void ResourceChain::replace(List resources, Done done) {
  if (op_ != Op::kIdle) {
    if (pending_replace_ && pending_replace_->second) {
      // Superseded by this one: the earlier caller learns that its list never ran.
      Done old = std::move(pending_replace_->second);
      old(Result<void>());
    }
    pending_replace_.emplace(std::move(resources), std::move(done));
    return;
  }
  beginReplace(std::move(resources), std::move(done));
}

void ResourceChain::beginReplace(List resources, Done done) {
  if (!holding_) {
    resources_ = std::move(resources);
    if (done) done(Result<void>());
    return;
  }
  steps_.clear();
  for (auto it = resources_.rbegin(); it != resources_.rend(); ++it) {
    if (!contains(resources, *it)) steps_.push_back(Step{*it, false});
  }
  for (const auto& r : resources) {
    if (!contains(resources_, r)) steps_.push_back(Step{r, true});
  }
  resources_ = std::move(resources);
  op_ = Op::kReplace;
  index_ = 0;
  done_ = std::move(done);
  replace_result_ = Result<void>();
  runReplaceStep();
}

void ResourceChain::reannounceAll() {
  for (auto& r : resources_) r->reannounce();
}

bool ResourceChain::anyPresent() const {
  return std::any_of(resources_.begin(), resources_.end(),
                     [](const auto& r) { return r->present(); });
}

void ResourceChain::issue(Resource& r, Op op) {
  uint64_t token = ++token_;
  in_flight_ = true;
  current_ = &r;
  timeout_->arm(r.timeout());
  auto cb = [this, token](Result<void> res) { stepDone(token, std::move(res)); };
  switch (op) {
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
    case Op::kReplace:
      break;
  }
}

void ResourceChain::runReplaceStep() {
  if (index_ >= steps_.size()) {
    steps_.clear();
    finish(replace_result_);
    return;
  }
  // The step keeps its resource alive, even one that left the list.
  std::shared_ptr<Resource> r = steps_[index_].resource;
  issue(*r, steps_[index_].start ? Op::kStart : Op::kStop);
}

void ResourceChain::runStep() {
  if (op_ == Op::kReplace) {
    runReplaceStep();
    return;
  }
  bool forward = op_ == Op::kStart || op_ == Op::kMonitor;
  if (forward && index_ >= resources_.size()) {
    finish(Result<void>());
    return;
  }
  if (!forward && index_ == 0) {
    holding_ = false;
    if (op_ == Op::kRollback) {
      finish(fail(*rollback_cause_));
    } else {
      finish(stop_result_);
    }
    return;
  }
  size_t i = forward ? index_ : index_ - 1;
  index_ = i;
  issue(*resources_[i], op_);
}

void ResourceChain::stepDone(uint64_t token, Result<void> r) {
  if (token != token_ || !in_flight_) return;  // a late answer to a step we gave up on
  in_flight_ = false;
  timeout_->cancel();
  const std::string name = current_ ? std::string(current_->name()) : "?";
  current_ = nullptr;
  if (queued_stop_ && op_ != Op::kReplace) {
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
        rollback_cause_ = Error{r.error().code, name + ": " + r.error().message};
        op_ = Op::kRollback;
        // index_ is the failed one: it may be half there, so it is stopped too.
        ++index_;
      } else {
        ++index_;
      }
      break;
    case Op::kMonitor:
      if (!r) {
        finish(fail(r.error().code, name + ": " + r.error().message));
        return;
      }
      ++index_;
      break;
    case Op::kStop:
    case Op::kRollback:
      // Keep stopping the rest: a stop failure must not leave the others held.
      if (!r && stop_result_) stop_result_ = fail(r.error().code, name + ": " + r.error().message);
      break;
    case Op::kReplace:
      if (!r && replace_result_) {
        replace_result_ = fail(r.error().code, name + ": " + r.error().message);
      }
      ++index_;
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
  if (op_ != Op::kIdle) return;  // the callback started the next operation
  if (queued_stop_) {
    Done stop = std::move(queued_stop_);
    queued_stop_ = nullptr;
    beginStop(std::move(stop));
    return;
  }
  if (pending_replace_) {
    auto [list, replace_done] = std::move(*pending_replace_);
    pending_replace_.reset();
    beginReplace(std::move(list), std::move(replace_done));
  }
}

}  // namespace tandem::resources
