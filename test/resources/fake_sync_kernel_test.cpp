// The sync-daemon fake keeps the kernel's rules (one daemon per state, EEXIST, ESRCH) and
// NetlinkKernel's completion rules, so that the sync subsystem's tests can lean on it.
#include "resources/fake_sync_kernel.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "fakes/sim_dispatcher.h"

namespace tandem::fakes {
namespace {

using namespace std::chrono_literals;

SyncDaemon daemonOf(SyncState s, uint32_t id) {
  SyncDaemon d;
  d.state = s;
  d.interface = "eth1";
  d.sync_id = id;
  return d;
}

TEST(FakeSyncKernel, OneDaemonPerStateWithTheKernelsRefusals) {
  FakeSyncKernel k;
  std::optional<Result<void>> r;
  k.startDaemon(daemonOf(SyncState::kMaster, 7), [&](Result<void> x) { r = x; });
  ASSERT_TRUE(r && *r);
  k.startDaemon(daemonOf(SyncState::kMaster, 8), [&](Result<void> x) { r = x; });
  ASSERT_TRUE(r && !*r);
  EXPECT_EQ(r->error().code, ErrorCode::kAlreadyExists);
  k.startDaemon(daemonOf(SyncState::kBackup, 7), [&](Result<void> x) { r = x; });
  ASSERT_TRUE(r && *r);
  // Reported as the kernel reports them: the defaults filled in.
  SyncDaemon master = daemonOf(SyncState::kMaster, 7);
  master.group = *IpAddress::parse("224.0.0.81");
  master.port = 8848;
  master.ttl = 1;
  master.max_len = 1472;
  SyncDaemon backup = master;
  backup.state = SyncState::kBackup;
  EXPECT_EQ(k.daemonsNow(), (std::vector<SyncDaemon>{master, backup}));
  k.killDaemon(SyncState::kMaster);  // ipvsadm --stop-daemon master, behind tandem's back
  k.stopDaemon(SyncState::kMaster, [&](Result<void> x) { r = x; });
  ASSERT_TRUE(r && !*r);
  EXPECT_EQ(r->error().code, ErrorCode::kNotFound);
  EXPECT_EQ(k.starts(), 3u);
  EXPECT_EQ(k.stops(), 1u);
}

TEST(FakeSyncKernel, OnADispatcherAnswersFromTheLoopAndCanFailOrStaySilent) {
  SimDispatcher sim;
  FakeSyncKernel k(sim);
  std::optional<Result<std::vector<SyncDaemon>>> listed;
  k.setDaemons({daemonOf(SyncState::kBackup, 3)});
  k.daemons([&](Result<std::vector<SyncDaemon>> x) { listed = std::move(x); });
  EXPECT_FALSE(listed);  // never from inside the call
  sim.advance(0ms);
  ASSERT_TRUE(listed && *listed);
  EXPECT_EQ(listed->value().size(), 1u);

  std::optional<Result<void>> r;
  k.failNext(Error{ErrorCode::kIo, "injected"});
  k.stopDaemon(SyncState::kBackup, [&](Result<void> x) { r = x; });
  sim.advance(0ms);
  ASSERT_TRUE(r && !*r);
  EXPECT_EQ(r->error().code, ErrorCode::kIo);
  EXPECT_TRUE(k.daemon(SyncState::kBackup));  // the failed request changed nothing

  r.reset();
  k.silent(true);
  k.stopDaemon(SyncState::kBackup, [&](Result<void> x) { r = x; });
  sim.advance(10s);
  EXPECT_FALSE(r);
  EXPECT_EQ(k.unanswered(), 1u);
  EXPECT_TRUE(k.daemon(SyncState::kBackup));
}

}  // namespace
}  // namespace tandem::fakes
