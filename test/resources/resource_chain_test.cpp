#include "core/resource_chain.h"

#include <gtest/gtest.h>

#include "fakes/sim_dispatcher.h"

namespace tandem::resources {
namespace {

using namespace std::chrono_literals;

// A resource whose operations answer when the test says, or at once.
class ScriptedResource final : public Resource {
 public:
  ScriptedResource(std::string name, std::vector<std::string>& journal)
      : name_(std::move(name)), journal_(journal) {}
  std::string_view name() const override { return name_; }
  void start(Done done) override { run("start", std::move(done), fail_start); }
  void stop(Done done) override { run("stop", std::move(done), fail_stop); }
  void monitor(Done done) override { run("monitor", std::move(done), fail_monitor); }
  bool present() const override { return up; }
  void reannounce() override { journal_.push_back("reannounce " + name_); }
  Millis timeout() const override { return 1s; }

  void answer(bool ok = true) {
    Done d = std::move(pending);
    pending = nullptr;
    d(ok ? Result<void>() : Result<void>(fail(ErrorCode::kIo, "boom")));
  }

  bool manual = false;  // hold the answer until answer()
  bool hang = false;    // never answer
  bool fail_start = false, fail_stop = false, fail_monitor = false;
  bool up = false;
  Done pending;

 private:
  void run(const std::string& op, Done done, bool failing) {
    journal_.push_back(op + " " + name_);
    if (!failing) up = op == "start" ? true : op == "stop" ? false : up;
    if (hang) {
      pending = std::move(done);
      return;
    }
    if (manual) {
      pending = [done, failing](Result<void> r) {
        done(failing ? Result<void>(fail(ErrorCode::kIo, "boom")) : r);
      };
      return;
    }
    done(failing ? Result<void>(fail(ErrorCode::kIo, name_ + " broke")) : Result<void>());
  }
  std::string name_;
  std::vector<std::string>& journal_;
};

class ResourceChainTest : public ::testing::Test {
 protected:
  ResourceChainTest() {
    std::vector<std::unique_ptr<Resource>> list;
    for (const char* n : {"a", "b", "c"}) {
      auto r = std::make_unique<ScriptedResource>(n, journal_);
      res_.push_back(r.get());
      list.push_back(std::move(r));
    }
    chain_ = std::make_unique<ResourceChain>(disp_, std::move(list));
  }
  ~ResourceChainTest() override { chain_.reset(); }

  std::function<void(Result<void>)> record() {
    return [this](Result<void> r) {
      results_.push_back(r ? std::string("ok") : "failed: " + r.error().message);
    };
  }

  fakes::SimDispatcher disp_;
  std::vector<std::string> journal_;
  std::vector<ScriptedResource*> res_;
  std::unique_ptr<ResourceChain> chain_;
  std::vector<std::string> results_;
};

TEST_F(ResourceChainTest, StartsInOrderAndStopsInReverse) {
  chain_->startAll(record());
  chain_->stopAll(record());
  EXPECT_EQ(journal_, (std::vector<std::string>{"start a", "start b", "start c", "stop c", "stop b",
                                                "stop a"}));
  EXPECT_EQ(results_, (std::vector<std::string>{"ok", "ok"}));
}

TEST_F(ResourceChainTest, ReannounceReachesEveryResourceInOrder) {
  chain_->startAll(record());
  journal_.clear();
  chain_->reannounceAll();
  EXPECT_EQ(journal_, (std::vector<std::string>{"reannounce a", "reannounce b", "reannounce c"}));
}

TEST_F(ResourceChainTest, AFailedStartUndoesWhatStartedThenReportsTheCause) {
  res_[1]->fail_start = true;
  chain_->startAll(record());
  EXPECT_EQ(journal_, (std::vector<std::string>{"start a", "start b", "stop b", "stop a"}));
  EXPECT_EQ(results_, (std::vector<std::string>{"failed: b: b broke"}));
  EXPECT_FALSE(chain_->anyPresent());
}

TEST_F(ResourceChainTest, AStopFailureStillStopsTheRest) {
  chain_->startAll(record());
  res_[1]->fail_stop = true;
  chain_->stopAll(record());
  EXPECT_EQ(journal_, (std::vector<std::string>{"start a", "start b", "start c", "stop c", "stop b",
                                                "stop a"}));
  EXPECT_EQ(results_.back(), "failed: b: b broke");
}

TEST_F(ResourceChainTest, AStepThatHangsTimesOutAndIsUndone) {
  res_[2]->hang = true;
  chain_->startAll(record());
  EXPECT_TRUE(results_.empty());
  disp_.advance(999ms);
  EXPECT_TRUE(results_.empty());
  res_[2]->hang = false;
  disp_.advance(1ms);
  EXPECT_EQ(results_, (std::vector<std::string>{"failed: c: c did not answer within 1s"}));
  EXPECT_EQ(journal_.back(), "stop a");
  res_[2]->pending = nullptr;
}

TEST_F(ResourceChainTest, AStopDuringAStartWaitsForTheStepThenStopsEverything) {
  res_[1]->manual = true;
  chain_->startAll(record());
  chain_->stopAll(record());
  EXPECT_EQ(journal_, (std::vector<std::string>{"start a", "start b"}));
  res_[1]->manual = false;
  res_[1]->answer();
  EXPECT_EQ(journal_, (std::vector<std::string>{"start a", "start b", "stop b", "stop a"}));
  EXPECT_EQ(results_, (std::vector<std::string>{"ok"})) << "only the stop is answered";
  EXPECT_FALSE(chain_->busy());
}

TEST_F(ResourceChainTest, MonitorReportsTheFirstFailureByName) {
  chain_->startAll(record());
  res_[1]->fail_monitor = true;
  chain_->monitorAll(record());
  EXPECT_EQ(results_.back(), "failed: b: b broke");
}

TEST_F(ResourceChainTest, ABusyChainRefusesASecondStart) {
  res_[0]->manual = true;
  chain_->startAll(record());
  chain_->startAll(record());
  EXPECT_EQ(results_, (std::vector<std::string>{"failed: the resource chain is busy"}));
  res_[0]->manual = false;
  res_[0]->answer();
  EXPECT_EQ(results_.back(), "ok");
}

// A reload hands the chain a new list: what left is stopped (in reverse), what joined is started
// (in order), what stayed is not touched.
class ChainReplaceTest : public ResourceChainTest {
 protected:
  std::shared_ptr<ScriptedResource> extra(const char* name) {
    auto r = std::make_shared<ScriptedResource>(name, journal_);
    extras_.push_back(r);
    return r;
  }
  ResourceChain::List listOf(std::vector<std::shared_ptr<Resource>> v) { return v; }
  std::shared_ptr<Resource> at(size_t i) { return chain_->resources().at(i); }
  std::vector<std::shared_ptr<ScriptedResource>> extras_;
};

TEST_F(ChainReplaceTest, WhileHeldItStopsWhatLeftAndStartsWhatJoinedAndNothingElse) {
  chain_->startAll(record());
  journal_.clear();
  auto d = extra("d");
  auto e = extra("e");
  // a stays, b leaves, c stays, d and e join (d between a and c).
  chain_->replace(listOf({at(0), d, at(2), e}), record());
  EXPECT_EQ(journal_, (std::vector<std::string>{"stop b", "start d", "start e"}));
  EXPECT_EQ(results_, (std::vector<std::string>{"ok", "ok"}));
  journal_.clear();
  chain_->stopAll(record());
  EXPECT_EQ(journal_, (std::vector<std::string>{"stop e", "stop c", "stop d", "stop a"}));
}

TEST_F(ChainReplaceTest, WhileNotHeldItOnlySwapsTheList) {
  auto d = extra("d");
  chain_->replace(listOf({d}), record());
  EXPECT_TRUE(journal_.empty());
  chain_->startAll(record());
  EXPECT_EQ(journal_, (std::vector<std::string>{"start d"}));
}

TEST_F(ChainReplaceTest, DuringAStartItWaitsAndThenAppliesTheDifference) {
  res_[1]->manual = true;
  chain_->startAll(record());
  auto d = extra("d");
  chain_->replace(listOf({at(0), at(1), at(2), d}), record());
  EXPECT_EQ(journal_, (std::vector<std::string>{"start a", "start b"}));
  res_[1]->manual = false;
  res_[1]->answer();
  EXPECT_EQ(journal_, (std::vector<std::string>{"start a", "start b", "start c", "start d"}));
  EXPECT_EQ(results_, (std::vector<std::string>{"ok", "ok"}));
}

TEST_F(ChainReplaceTest, AResourceThatLeftLivesUntilItIsStopped) {
  chain_->startAll(record());
  std::weak_ptr<Resource> b = at(1);
  res_[1]->manual = true;
  chain_->replace(listOf({at(0), at(2)}), record());
  res_.clear();  // the test's raw pointers; the chain's step holds b now
  ASSERT_FALSE(b.expired()) << "b is being stopped";
  auto held = std::static_pointer_cast<ScriptedResource>(b.lock());
  held->manual = false;
  held->answer();
  held.reset();
  EXPECT_TRUE(b.expired());
  EXPECT_EQ(results_.back(), "ok");
}

TEST_F(ChainReplaceTest, AFailedStartIsReportedAndTheRestStillRuns) {
  chain_->startAll(record());
  auto d = extra("d");
  auto e = extra("e");
  d->fail_start = true;
  chain_->replace(listOf({at(0), at(1), at(2), d, e}), record());
  EXPECT_EQ(results_.back(), "failed: d: d broke");
  EXPECT_EQ(journal_.back(), "start e");
}

TEST_F(ChainReplaceTest, AStopDuringAReplaceStopsEverythingAfterIt) {
  chain_->startAll(record());
  auto d = extra("d");
  d->manual = true;
  chain_->replace(listOf({at(0), d}), record());
  chain_->stopAll(record());
  d->manual = false;
  d->answer();
  EXPECT_EQ(journal_, (std::vector<std::string>{"start a", "start b", "start c", "stop c", "stop b",
                                                "start d", "stop d", "stop a"}));
  EXPECT_FALSE(chain_->holding());
  EXPECT_FALSE(chain_->busy());
}

}  // namespace
}  // namespace tandem::resources
