// libqb's poll handlers on a simulated Dispatcher: each contract libqb relies on (negative
// return removes, delete-and-re-add inside a callback, jobs run once) without a real socket.
#include "ipc/qb_poll_adapter.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <cerrno>
#include <vector>

#include "fakes/sim_dispatcher.h"

namespace tandem::ipc {
namespace {

struct Call {
  int32_t fd;
  int32_t revents;
  void* data;
};

// libqb's callbacks are plain C functions; these record into a global the test inspects.
std::vector<Call> g_calls;
int32_t g_return = 0;
qb_ipcs_poll_handlers g_handlers{};

int32_t record(int32_t fd, int32_t revents, void* data) {
  g_calls.push_back({fd, revents, data});
  return g_return;
}
int32_t recordOther(int32_t fd, int32_t revents, void* data) {
  g_calls.push_back({fd, revents + 1000, data});
  return 0;
}
// What libqb does when a client finishes authenticating: drops the fd's watch and adds a new
// one for the same fd with another callback, all inside the first callback.
int32_t deleteAndReAdd(int32_t fd, int32_t /*revents*/, void* data) {
  g_calls.push_back({fd, -1, data});
  EXPECT_EQ(g_handlers.dispatch_del(fd), 0);
  EXPECT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, fd, POLLIN, data, &recordOther), 0);
  return g_return;
}
int g_jobs = 0;
void job(void* data) {
  ++g_jobs;
  EXPECT_EQ(data, &g_jobs);
}

class QbPollAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_calls.clear();
    g_return = 0;
    g_jobs = 0;
    auto a = QbPollAdapter::create(dispatcher_);
    ASSERT_TRUE(a.has_value()) << a.error().message;
    adapter_ = std::move(*a);
    g_handlers = adapter_->handlers();
  }
  void TearDown() override { adapter_.reset(); }

  fakes::SimDispatcher dispatcher_;
  std::unique_ptr<QbPollAdapter> adapter_;
  int data_ = 0;
};

TEST_F(QbPollAdapterTest, OnlyOneAdapterMayExistAtATime) {
  auto second = QbPollAdapter::create(dispatcher_);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kAlreadyExists);
}

TEST_F(QbPollAdapterTest, ReadableFdCallsBackWithPollinAndItsData) {
  ASSERT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, 7, POLLIN | POLLPRI | POLLNVAL, &data_, &record),
            0);
  EXPECT_TRUE(dispatcher_.fdInterest(7)->readable);
  EXPECT_FALSE(dispatcher_.fdInterest(7)->writable);
  dispatcher_.fireFd(7, loop::FdEvents{true, false});
  ASSERT_EQ(g_calls.size(), 1u);
  EXPECT_EQ(g_calls[0].fd, 7);
  EXPECT_EQ(g_calls[0].revents, POLLIN);
  EXPECT_EQ(g_calls[0].data, &data_);
}

TEST_F(QbPollAdapterTest, ModChangesInterestCallbackAndData) {
  ASSERT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, 7, POLLIN, &data_, &record), 0);
  int other = 0;
  ASSERT_EQ(g_handlers.dispatch_mod(QB_LOOP_MED, 7, POLLIN | POLLOUT, &other, &recordOther), 0);
  EXPECT_TRUE(dispatcher_.fdInterest(7)->writable);
  dispatcher_.fireFd(7, loop::FdEvents{false, true});
  ASSERT_EQ(g_calls.size(), 1u);
  EXPECT_EQ(g_calls[0].revents, POLLOUT + 1000);
  EXPECT_EQ(g_calls[0].data, &other);
}

TEST_F(QbPollAdapterTest, NegativeReturnRemovesTheWatchAsQbLoopWould) {
  ASSERT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, 7, POLLIN, &data_, &record), 0);
  g_return = -ESHUTDOWN;
  dispatcher_.fireFd(7, loop::FdEvents{true, false});
  EXPECT_FALSE(dispatcher_.fdInterest(7).has_value());
  EXPECT_EQ(adapter_->watchedFds(), 0u);
  EXPECT_EQ(g_handlers.dispatch_del(7), -EBADF);
}

TEST_F(QbPollAdapterTest, DeleteAndReAddInsideTheCallbackKeepsTheNewWatch) {
  ASSERT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, 7, POLLIN, &data_, &deleteAndReAdd), 0);
  g_return = 1;
  dispatcher_.fireFd(7, loop::FdEvents{true, false});
  dispatcher_.fireFd(7, loop::FdEvents{true, false});
  ASSERT_EQ(g_calls.size(), 2u);
  EXPECT_EQ(g_calls[1].revents, POLLIN + 1000) << "the second event goes to the new callback";
}

TEST_F(QbPollAdapterTest, NegativeReturnAfterReAddSparesTheNewWatch) {
  ASSERT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, 7, POLLIN, &data_, &deleteAndReAdd), 0);
  g_return = -1;
  dispatcher_.fireFd(7, loop::FdEvents{true, false});
  EXPECT_EQ(adapter_->watchedFds(), 1u);
  dispatcher_.fireFd(7, loop::FdEvents{true, false});
  ASSERT_EQ(g_calls.size(), 2u);
  EXPECT_EQ(g_calls[1].revents, POLLIN + 1000);
}

TEST_F(QbPollAdapterTest, WatchingAWatchedFdFailsAndUnknownFdsCannotChange) {
  ASSERT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, 7, POLLIN, &data_, &record), 0);
  EXPECT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, 7, POLLIN, &data_, &record), -EEXIST);
  EXPECT_EQ(g_handlers.dispatch_mod(QB_LOOP_MED, 8, POLLIN, &data_, &record), -EBADF);
  EXPECT_EQ(g_handlers.dispatch_del(8), -EBADF);
  EXPECT_EQ(g_handlers.dispatch_del(7), 0);
  EXPECT_FALSE(dispatcher_.fdInterest(7).has_value());
}

TEST_F(QbPollAdapterTest, JobRunsOnceOnTheNextTurnOfTheLoop) {
  ASSERT_EQ(g_handlers.job_add(QB_LOOP_LOW, &g_jobs, &job), 0);
  EXPECT_EQ(g_jobs, 0) << "a job never runs inside job_add";
  EXPECT_EQ(adapter_->pendingJobs(), 1u);
  dispatcher_.advance(Millis(0));
  EXPECT_EQ(g_jobs, 1);
  EXPECT_EQ(adapter_->pendingJobs(), 0u);
  dispatcher_.advance(Millis(100));
  EXPECT_EQ(g_jobs, 1);
}

TEST_F(QbPollAdapterTest, HandlersFailQuietlyOnceTheAdapterIsGone) {
  adapter_.reset();
  EXPECT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, 7, POLLIN, &data_, &record), -EINVAL);
  EXPECT_EQ(g_handlers.job_add(QB_LOOP_MED, &g_jobs, &job), -EINVAL);
  auto again = QbPollAdapter::create(dispatcher_);
  EXPECT_TRUE(again.has_value()) << "a new adapter may replace a destroyed one";
}

// --- half-open connections ---------------------------------------------------------------
// What libqb does, in miniature: the listener's callback accepts a client and adds a watch for
// its credentials (authAwait); that watch, on POLLIN, authenticates: drops itself and adds the
// connection's watch (recordOther); on POLLHUP it gives up: drops itself, "closes", returns 1.
int32_t g_next_client = 100;
std::vector<int32_t> g_hung_up;
int32_t authAwait(int32_t fd, int32_t revents, void* data) {
  EXPECT_EQ(g_handlers.dispatch_del(fd), 0);
  if (revents & POLLHUP) {
    g_hung_up.push_back(fd);
  } else {
    EXPECT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, fd, POLLIN, data, &recordOther), 0);
  }
  return 1;
}
int32_t acceptOne(int32_t /*fd*/, int32_t /*revents*/, void* data) {
  EXPECT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, g_next_client++, POLLIN, data, &authAwait), 0);
  return 0;
}

class QbPollAdapterAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_calls.clear();
    g_hung_up.clear();
    g_next_client = 100;
    auto a = QbPollAdapter::create(dispatcher_, AuthLimits{Millis(5000), 3});
    ASSERT_TRUE(a.has_value()) << a.error().message;
    adapter_ = std::move(*a);
    g_handlers = adapter_->handlers();
    ASSERT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, 5, POLLIN, &data_, &acceptOne), 0);
    adapter_->markListeners();
  }
  void TearDown() override { adapter_.reset(); }
  void accept() { ASSERT_TRUE(dispatcher_.fireFd(5, loop::FdEvents{true, false})); }

  fakes::SimDispatcher dispatcher_;
  std::unique_ptr<QbPollAdapter> adapter_;
  int data_ = 0;
};

TEST_F(QbPollAdapterAuthTest, AClientThatNeverAuthenticatesIsHungUpAtTheTimeout) {
  accept();  // fd 100
  EXPECT_EQ(adapter_->authenticating(), 1u);
  dispatcher_.advance(Millis(4999));
  EXPECT_TRUE(g_hung_up.empty());
  dispatcher_.advance(Millis(1));
  EXPECT_EQ(g_hung_up, std::vector<int32_t>{100});
  EXPECT_EQ(adapter_->authenticating(), 0u);
  EXPECT_EQ(adapter_->authHungUp(), 1u);
  EXPECT_EQ(adapter_->watchedFds(), 1u) << "only the listener is left";
  EXPECT_TRUE(dispatcher_.fdInterest(5).has_value());
}

TEST_F(QbPollAdapterAuthTest, AnAuthenticatedConnectionIsNeverTouched) {
  accept();  // fd 100
  dispatcher_.advance(Millis(10));
  ASSERT_TRUE(dispatcher_.fireFd(100, loop::FdEvents{true, false}));  // its credentials
  EXPECT_EQ(adapter_->authenticating(), 0u);
  dispatcher_.advance(Millis(60'000));
  EXPECT_TRUE(g_hung_up.empty());
  EXPECT_EQ(adapter_->authHungUp(), 0u);
  ASSERT_TRUE(dispatcher_.fireFd(100, loop::FdEvents{true, false}));  // a request
  ASSERT_EQ(g_calls.size(), 1u);
  EXPECT_EQ(g_calls[0].revents, POLLIN + 1000) << "the connection's own callback";
}

TEST_F(QbPollAdapterAuthTest, BeyondTheLimitTheOldestIsHungUpOnTheNextTurn) {
  for (int i = 0; i < 5; ++i) {
    accept();  // fds 100..104
    dispatcher_.advance(Millis(1));
  }
  EXPECT_EQ(g_hung_up, (std::vector<int32_t>{100, 101}));
  EXPECT_EQ(adapter_->authenticating(), 3u);
  // The newest still authenticate.
  ASSERT_TRUE(dispatcher_.fireFd(104, loop::FdEvents{true, false}));
  EXPECT_EQ(adapter_->authenticating(), 2u);
  dispatcher_.advance(Millis(5000));
  EXPECT_EQ(g_hung_up, (std::vector<int32_t>{100, 101, 102, 103}));
  EXPECT_EQ(adapter_->watchedFds(), 2u) << "the listener and the authenticated connection";
}

TEST_F(QbPollAdapterAuthTest, WatchesAddedOutsideTheListenerAreOrdinary) {
  ASSERT_EQ(g_handlers.dispatch_add(QB_LOOP_MED, 9, POLLIN, &data_, &record), 0);
  EXPECT_EQ(adapter_->authenticating(), 0u);
  dispatcher_.advance(Millis(60'000));
  EXPECT_TRUE(g_hung_up.empty());
  EXPECT_EQ(g_handlers.dispatch_del(9), 0);
}

}  // namespace
}  // namespace tandem::ipc
