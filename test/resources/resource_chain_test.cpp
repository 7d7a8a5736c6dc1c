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

}  // namespace
}  // namespace tandem::resources
