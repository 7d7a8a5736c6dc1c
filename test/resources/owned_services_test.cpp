// The services tandem owns across a restart: the file's text (pure), the file itself (a temp
// dir), and the reconciler that reads and writes it (a fake kernel and an in-memory store).
#include "ipvs/owned_services.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "fakes/temp_dir.h"
#include "ipvs/ipvs_desired.h"
#include "ipvs/reconciler.h"
#include "resources/fake_ipvs_kernel.h"
#include "resources/run_pass.h"

namespace tandem::resources::ipvs {
namespace {

using Kind = Op::Kind;

ServiceKey tcpKey(const char* address, uint16_t port, uint16_t proto = IPPROTO_TCP) {
  ServiceKey k;
  k.address = *IpAddress::parse(address);
  k.family = k.address.family;
  k.protocol = proto;
  k.port = port;
  return k;
}

ServiceKey markKey(uint32_t mark, Family f) {
  ServiceKey k;
  k.fwmark = mark;
  k.family = f;
  return k;
}

TEST(OwnedServices, TextRoundTrips) {
  const std::set<ServiceKey> keys = {
      tcpKey("198.51.100.10", 80), tcpKey("198.51.100.11", 53, IPPROTO_UDP),
      tcpKey("2001:db8::10", 443), tcpKey("198.51.100.12", 3868, IPPROTO_SCTP),
      markKey(7, Family::kInet),   markKey(8, Family::kInet6)};
  const std::string text = formatOwned(keys);
  EXPECT_NE(text.find("\ntcp 198.51.100.10:80\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntcp [2001:db8::10]:443\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nfwmark 8 ipv6\n"), std::string::npos) << text;
  ParsedOwned back = parseOwned(text, "/run/tandem/ipvs-owned");
  EXPECT_TRUE(back.warnings.empty());
  EXPECT_EQ(back.keys, keys);
  EXPECT_TRUE(parseOwned(formatOwned({}), "f").keys.empty());
}

TEST(OwnedServices, BadLinesAreNamedAndSkipped) {
  const std::string text =
      "# comment\n"
      "\n"
      "tcp 198.51.100.10:80\n"
      "tcp 198.51.100.300:80\n"
      "icmp 198.51.100.10:80\r\n"
      "fwmark 0 ipv4\n"
      "fwmark 9 ipv5\n"
      "tcp 198.51.100.11:80 extra\n"
      "udp [2001:db8::1]:53\n"
      "tcp 198.51.100.12\n";
  ParsedOwned p = parseOwned(text, "/run/tandem/ipvs-owned");
  EXPECT_EQ(p.keys, (std::set<ServiceKey>{tcpKey("198.51.100.10", 80),
                                          tcpKey("2001:db8::1", 53, IPPROTO_UDP)}));
  ASSERT_EQ(p.warnings.size(), 6u);
  EXPECT_EQ(p.warnings[0].rfind("/run/tandem/ipvs-owned:4: ", 0), 0u) << p.warnings[0];
  EXPECT_NE(p.warnings[0].find("not an address:port"), std::string::npos) << p.warnings[0];
  EXPECT_EQ(p.warnings[1].rfind("/run/tandem/ipvs-owned:5: ", 0), 0u) << p.warnings[1];
  EXPECT_NE(p.warnings[1].find("\"icmp\" is not a protocol"), std::string::npos);
  EXPECT_EQ(p.warnings[2].rfind("/run/tandem/ipvs-owned:6: ", 0), 0u);
  EXPECT_EQ(p.warnings[3].rfind("/run/tandem/ipvs-owned:7: ", 0), 0u);
  EXPECT_EQ(p.warnings[4].rfind("/run/tandem/ipvs-owned:8: ", 0), 0u);
  EXPECT_EQ(p.warnings[5].rfind("/run/tandem/ipvs-owned:10: ", 0), 0u);
  for (const auto& w : p.warnings) EXPECT_NE(w.find("line ignored"), std::string::npos) << w;
  // Binary junk: warnings, no keys, no crash.
  ParsedOwned junk = parseOwned(std::string("\0\xff\n\x01 \x02\n", 6), "f");
  EXPECT_TRUE(junk.keys.empty());
  EXPECT_EQ(junk.warnings.size(), 2u);
}

class OwnedFileTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }
  fakes::TempDir tmp_{"tandem-owned"};
  std::string dir_ = tmp_.path().string();
};

TEST_F(OwnedFileTest, MissingFileIsAFirstStartThenWritesReadBack) {
  OwnedFile f(dir_ + "/state/ipvs-owned");  // the directory is created on write
  auto none = f.read();
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(f.write("tcp 198.51.100.10:80\n"));
  ASSERT_TRUE(f.write("udp 198.51.100.11:53\n"));
  auto got = f.read();
  ASSERT_TRUE(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, "udp 198.51.100.11:53\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/state/ipvs-owned.tmp"));
}

TEST_F(OwnedFileTest, UnreadableOrUnwritableIsAnErrorNamingThePath) {
  OwnedFile blocked(dir_ + "/no/such/dir/ipvs-owned");
  auto w = blocked.write("x\n");
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find(dir_ + "/no/such/dir/ipvs-owned"), std::string::npos)
      << w.error().message;
  std::filesystem::create_directory(dir_ + "/adir");
  OwnedFile is_dir(dir_ + "/adir");
  auto r = is_dir.read();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(dir_ + "/adir"), std::string::npos) << r.error().message;
}

// The store in memory, for the reconciler.
class MemoryStore final : public OwnedStore {
 public:
  const std::string& path() const override { return path_; }
  Result<std::optional<std::string>> read() override {
    if (fail_read) return fail(ErrorCode::kPermissionDenied, "cannot open " + path_ + ": denied");
    return text;
  }
  Result<void> write(const std::string& t) override {
    ++writes;
    if (fail_write) return fail(ErrorCode::kIo, "cannot write " + path_ + ": disk full");
    text = t;
    return {};
  }
  std::optional<std::string> text;
  size_t writes = 0;
  bool fail_read = false;
  bool fail_write = false;

 private:
  std::string path_ = "/run/tandem/ipvs-owned";
};

struct Lines {
  IpvsLog sink() {
    return [this](LogLevel l, const std::string& t) {
      if (l == LogLevel::kWarning) warnings.push_back(t);
    };
  }
  std::vector<std::string> warnings;
};

Table tableOf(std::initializer_list<ServiceKey> keys) {
  Table t;
  for (const auto& k : keys) {
    ServiceState s;
    s.service.key = k;
    Destination d;
    d.key = DestKey{*IpAddress::parse("203.0.113.21"), k.port};
    s.destinations.push_back(DestinationState{d, 0, 0, 0, {}});
    t.services.push_back(s);
  }
  return t;
}

const ServiceKey kWeb = tcpKey("198.51.100.10", 80);
const ServiceKey kOld = tcpKey("198.51.100.11", 80);     // dropped from the config while down
const ServiceKey kTheirs = tcpKey("198.51.100.12", 80);  // ipvsadm's, never tandem's

class OwnedAcrossRestart : public ::testing::Test {
 protected:
  void SetUp() override { kernel_.load(tableOf({kWeb, kOld, kTheirs})); }
  Result<ReconcileReport> run(Reconciler& rec, const Table& t, bool all,
                              Pass pass = Pass::kVerify) {
    return fakes::runPass(sim_, rec, t, all, pass);
  }
  fakes::SimDispatcher sim_;
  fakes::FakeIpvsKernel kernel_{sim_};
  MemoryStore store_;
  Lines log_;
};

TEST_F(OwnedAcrossRestart, ServiceInTheFileNotInTheConfigIsDeletedOthersAreLeftAlone) {
  store_.text = formatOwned({kWeb, kOld});
  Reconciler rec(sim_, kernel_, log_.sink(), &store_);
  EXPECT_EQ(rec.owned(), (std::set<ServiceKey>{kWeb, kOld}));
  auto r = run(rec, tableOf({kWeb}), false);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(kernel_.hasService(kWeb));
  EXPECT_FALSE(kernel_.hasService(kOld)) << "tandem owned it before the restart";
  EXPECT_TRUE(kernel_.hasService(kTheirs)) << "not in the file: not tandem's";
  EXPECT_EQ(kernel_.writes(), 1u);
  EXPECT_EQ(parseOwned(*store_.text, "f").keys, (std::set<ServiceKey>{kWeb}));
  EXPECT_TRUE(log_.warnings.empty());
}

TEST_F(OwnedAcrossRestart, WithoutTheFileNothingIsDeleted) {
  Reconciler rec(sim_, kernel_, log_.sink(), &store_);
  ASSERT_TRUE(run(rec, tableOf({kWeb}), false));
  EXPECT_TRUE(kernel_.hasService(kOld));
  EXPECT_TRUE(kernel_.hasService(kTheirs));
  EXPECT_EQ(kernel_.writes(), 0u);
  ASSERT_TRUE(store_.text.has_value()) << "the first pass records what tandem owns";
  EXPECT_EQ(parseOwned(*store_.text, "f").keys, (std::set<ServiceKey>{kWeb}));
}

TEST_F(OwnedAcrossRestart, CorruptLinesAreWarnedAndOnlyValidLinesCount) {
  store_.text = "tcp 198.51.100.10:80\ntcp 198.51.100.11:eighty\nudp 198.51.100.12 80\n";
  Reconciler rec(sim_, kernel_, log_.sink(), &store_);
  ASSERT_EQ(log_.warnings.size(), 2u);
  EXPECT_EQ(log_.warnings[0].rfind("/run/tandem/ipvs-owned:2: ", 0), 0u) << log_.warnings[0];
  EXPECT_EQ(log_.warnings[1].rfind("/run/tandem/ipvs-owned:3: ", 0), 0u) << log_.warnings[1];
  ASSERT_TRUE(run(rec, tableOf({}), false));
  EXPECT_FALSE(kernel_.hasService(kWeb)) << "validly named, out of the config: deleted";
  EXPECT_TRUE(kernel_.hasService(kOld)) << "named only by a bad line: left alone";
  EXPECT_TRUE(kernel_.hasService(kTheirs));
}

TEST_F(OwnedAcrossRestart, UnreadableFileIsAWarningAndDeletesNothing) {
  store_.fail_read = true;
  Reconciler rec(sim_, kernel_, log_.sink(), &store_);
  ASSERT_EQ(log_.warnings.size(), 1u);
  EXPECT_NE(log_.warnings[0].find("cannot open /run/tandem/ipvs-owned"), std::string::npos);
  ASSERT_TRUE(run(rec, tableOf({kWeb}), false));
  EXPECT_EQ(kernel_.writes(), 0u);
}

TEST_F(OwnedAcrossRestart, WrittenOnlyWhenTheOwnedSetChanges) {
  Reconciler rec(sim_, kernel_, log_.sink(), &store_);
  ASSERT_TRUE(run(rec, tableOf({kWeb}), false));
  EXPECT_EQ(store_.writes, 1u);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(run(rec, tableOf({kWeb}), false));
  EXPECT_EQ(store_.writes, 1u) << "a steady table rewrites nothing";
  ASSERT_TRUE(run(rec, tableOf({kWeb, kOld}), false, Pass::kChange));
  EXPECT_EQ(store_.writes, 2u);
  EXPECT_EQ(parseOwned(*store_.text, "f").keys, (std::set<ServiceKey>{kWeb, kOld}));
}

TEST_F(OwnedAcrossRestart, WriteFailureIsWarnedOnceAndRetried) {
  store_.fail_write = true;
  Reconciler rec(sim_, kernel_, log_.sink(), &store_);
  ASSERT_TRUE(run(rec, tableOf({kWeb}), false));
  ASSERT_TRUE(run(rec, tableOf({kWeb}), false));
  EXPECT_EQ(log_.warnings.size(), 1u);
  EXPECT_NE(log_.warnings[0].find("cannot write /run/tandem/ipvs-owned: disk full"),
            std::string::npos);
  store_.fail_write = false;
  ASSERT_TRUE(run(rec, tableOf({kWeb}), false));
  EXPECT_EQ(store_.writes, 3u);
  ASSERT_TRUE(store_.text.has_value());
}

// A whole restart: one Reconciler's file read by the next.
TEST_F(OwnedAcrossRestart, RestartWithTheServiceDroppedFromTheConfig) {
  fakes::FakeIpvsKernel kernel{sim_};
  {
    Reconciler first(sim_, kernel, log_.sink(), &store_);
    ASSERT_TRUE(run(first, tableOf({kWeb, kOld}), false));
  }
  ASSERT_TRUE(kernel.hasService(kOld));
  Reconciler second(sim_, kernel, log_.sink(), &store_);
  ASSERT_TRUE(run(second, tableOf({kWeb}), false));
  EXPECT_FALSE(kernel.hasService(kOld));
  EXPECT_TRUE(kernel.hasService(kWeb));
}

}  // namespace
}  // namespace tandem::resources::ipvs
