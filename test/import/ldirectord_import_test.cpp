// importLdirectord: golden imports of our own ldirectord.cf files, the mapping table, and the
// errors that stop an import.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "fake_source_reader.h"
#include "golden_file.h"
#include "importer.h"
#include "mapping.h"

namespace tandem::importer {
namespace {

using cli::testing::expectGoldenText;
using cli::testing::readFile;

const std::filesystem::path kGolden = std::filesystem::path(GOLDEN_DIR) / "ldirectord";

ImportResult importText(const std::string& text, const std::string& file = "ldirectord.cf") {
  test::FakeSourceReader reader;
  reader.files[file] = text;
  return importLdirectord(file, reader, ImportOptions{});
}

std::vector<std::string> goldenNames() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kGolden)) {
    if (e.path().extension() == ".cf") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class LdirectordGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(LdirectordGolden, ImportsAsTheGoldenFilesSay) {
  const std::string name = GetParam();
  ImportResult r = importText(readFile(kGolden / (name + ".cf")), name + ".cf");
  ASSERT_TRUE(r.ok()) << r.errors[0].text();
  expectGoldenText(r.conf, kGolden / (name + ".toml"));
  expectGoldenText(r.report.text(), kGolden / (name + ".report"));
}

TEST_P(LdirectordGolden, RecordsEveryConstructThroughTheMapping) {
  const std::string name = GetParam();
  ImportResult r = importText(readFile(kGolden / (name + ".cf")), name + ".cf");
  ASSERT_TRUE(r.ok());
  for (const auto& l : r.report.lines()) {
    EXPECT_NE(l.reason, "not in the importer's mapping")
        << l.file << ":" << l.line << " " << l.construct;
  }
}

TEST_P(LdirectordGolden, RecordsEveryDirectiveLineOfTheSource) {
  const std::string name = GetParam();
  std::string text = readFile(kGolden / (name + ".cf"));
  ImportResult r = importText(text, name + ".cf");
  ASSERT_TRUE(r.ok());
  std::set<int> recorded;
  for (const auto& l : r.report.lines()) recorded.insert(l.line);
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    EXPECT_TRUE(recorded.count(n)) << name << ".cf:" << n << " is not in the report: " << line;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, LdirectordGolden, ::testing::ValuesIn(goldenNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string s = i.param;
                           for (char& c : s) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return s;
                         });

TEST(LdirectordImport, QuiescentYesKeepsAFailedServerAtWeightZeroAndNoRemovesIt) {
  ImportResult yes = importText("quiescent=yes\nvirtual=192.0.2.1:80\n\treal=10.0.0.1:80 gate\n");
  ASSERT_TRUE(yes.ok());
  EXPECT_NE(yes.conf.find("on_failure = \"quiescent\""), std::string::npos);
  ImportResult no = importText("virtual=192.0.2.1:80\n\treal=10.0.0.1:80 gate\n\tquiescent=no\n");
  ASSERT_TRUE(no.ok());
  EXPECT_NE(no.conf.find("on_failure = \"remove\""), std::string::npos);
}

TEST(LdirectordImport, UnsetQuiescentRemovesAsLdirectordsCodeDoesAndSaysSo) {
  ImportResult r = importText("virtual=192.0.2.1:80\n\treal=10.0.0.1:80 gate\n");
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.conf.find("on_failure = \"remove\""), std::string::npos);
  bool noted = false;
  for (const auto& n : r.report.notes()) noted |= n.starts_with("quiescent is not set");
  EXPECT_TRUE(noted);
}

TEST(LdirectordImport, FailureWindowFollowsFailurecountAndCheckinterval) {
  ImportResult r = importText(
      "checkinterval=5\nfailurecount=3\nvirtual=192.0.2.1:22\n\treal=10.0.0.1:22 gate\n"
      "\tchecktype=connect\n\tchecktimeout=2\n");
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.conf.find("rise = 1"), std::string::npos);
  EXPECT_NE(r.conf.find("fall = 3"), std::string::npos);
  EXPECT_NE(r.conf.find("interval = \"5s\""), std::string::npos);
  EXPECT_NE(r.conf.find("timeout = \"2s\""), std::string::npos);
  bool found = false;
  for (const auto& l : r.report.lines()) {
    if (l.line == 3) {
      found = true;
      EXPECT_NE(l.reason.find("within 3 x 2s + 2 x 5s = 16s"), std::string::npos) << l.reason;
    }
  }
  EXPECT_TRUE(found);
}

TEST(LdirectordImport, NegotiateChecksTakeNegotiatetimeoutAndConnectChecksCheckTimeout) {
  ImportResult r = importText(
      "checktimeout=2\nnegotiatetimeout=7\n"
      "virtual=192.0.2.1:80\n\treal=10.0.0.1:80 gate\n"
      "virtual=192.0.2.1:22\n\treal=10.0.0.1:22 gate\n\tchecktype=connect\n");
  ASSERT_TRUE(r.ok());
  size_t http = r.conf.find("type = \"http\"");
  size_t tcp = r.conf.find("type = \"tcp\"");
  ASSERT_NE(http, std::string::npos);
  ASSERT_NE(tcp, std::string::npos);
  EXPECT_NE(r.conf.find("timeout = \"7s\"", http), std::string::npos);
  EXPECT_NE(r.conf.find("timeout = \"2s\"", tcp), std::string::npos);
}

TEST(LdirectordImport, WritesTheClusterPartWithPlaceholdersAndNotes) {
  test::FakeSourceReader reader;
  reader.files["/etc/ha.d/ldirectord.cf"] = "virtual=192.0.2.1:80\n\treal=10.0.0.1:80 gate\n";
  ImportOptions options;
  options.key_file = "/etc/tandem/authkey";
  ImportResult r = importLdirectord("/etc/ha.d/ldirectord.cf", reader, options);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.conf.find("[cluster]\nname = \"ldirectord\""), std::string::npos);
  EXPECT_NE(r.conf.find("file = \"/etc/tandem/authkey\""), std::string::npos);
  EXPECT_NE(r.conf.find("name = \"director1\""), std::string::npos);
  EXPECT_NE(r.conf.find("name = \"director2\""), std::string::npos);
  EXPECT_NE(r.conf.find("# address = \"192.0.2.1/24\""), std::string::npos);
  EXPECT_GE(r.report.notes().size(), 4u);
}

struct BadImport {
  const char* name;
  const char* text;
  const char* error;
};

class LdirectordImportBadInput : public ::testing::TestWithParam<BadImport> {};

TEST_P(LdirectordImportBadInput, StopsWithTheLineAndWhatToDo) {
  ImportResult r = importText(GetParam().text, "ld.cf");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.conf.empty());
  EXPECT_EQ(r.errors[0].text(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Files, LdirectordImportBadInput,
    ::testing::Values(
        BadImport{"UnknownDirective", "checkintervall=3\n",
                  "ld.cf:1: unknown directive \"checkintervall\" (ldirectord refuses it too); did "
                  "you mean \"checkinterval\"?"},
        BadImport{"VirtualDirectiveAtTop", "scheduler=rr\n",
                  "ld.cf:1: scheduler belongs to a virtual service: indent it under its virtual= "
                  "line"},
        BadImport{"GlobalDirectiveInVirtual",
                  "virtual=192.0.2.1:80\n\treal=10.0.0.1:80 gate\n\tautoreload=yes\n",
                  "ld.cf:3: autoreload is a global directive: write it at the start of a line, "
                  "before the first virtual="},
        BadImport{"NotYesOrNo", "quiescent=maybe\n",
                  "ld.cf:1: quiescent takes yes or no, not \"maybe\""},
        BadImport{"BadChecktype", "virtual=192.0.2.1:80\n\tchecktype=http\n",
                  "ld.cf:2: checktype \"http\" is not connect, negotiate, on, off, ping, external, "
                  "external-perl or a number"},
        BadImport{"BadService", "virtual=192.0.2.1:80\n\tservice=gopher\n",
                  "ld.cf:2: service \"gopher\" is not one ldirectord knows: use dns, ftp, http, "
                  "https, http_proxy, imap, imaps, ldap, ldaps, mysql, nntp, none, oracle, pgsql, "
                  "pop, pops, radius, simpletcp, sip, smtp or submission"},
        BadImport{"IntervalNotANumber", "checkinterval=fast\n",
                  "ld.cf:1: checkinterval \"fast\" is not a whole number: write digits only, e.g. "
                  "checkinterval = 5"},
        BadImport{"FailurecountTooHigh", "failurecount=1000\n",
                  "ld.cf:1: failurecount 1000 is out of range: use 1 to 100 (tandem's fall)"},
        BadImport{"DuplicateVirtual",
                  "virtual=192.0.2.1:80\n\treal=10.0.0.1:80 gate\nvirtual=192.0.2.1:80\n",
                  "ld.cf:3: duplicate virtual service: the same one is at line 1; merge the two "
                  "blocks"},
        BadImport{"DuplicateReal",
                  "virtual=192.0.2.1:80\n\treal=10.0.0.1:80 gate\n\treal=10.0.0.1 gate\n",
                  "ld.cf:3: real server 10.0.0.1:80 is listed twice (also at line 2); remove one"},
        BadImport{"UnknownScheduler", "virtual=192.0.2.1:80\n\tscheduler=fair\n",
                  "ld.cf:2: scheduler \"fair\" is not an IPVS scheduler tandem knows; use rr, wrr, "
                  "lc, wlc, lblc, lblcr, dh, sh, sed, nq, mh, fo, ovf or twos"},
        BadImport{"FwmarkMasqWithoutPort", "virtual=1\n\treal=10.0.0.1 masq\n",
                  "ld.cf:2: a masq real server of a firewall-mark service needs a port: write "
                  "real=ADDRESS:PORT masq"},
        BadImport{"RealOfTheOtherFamily", "virtual=192.0.2.1:80\n\treal6=[2001:db8::1]:80 gate\n",
                  "ld.cf:2: the real server is not of the virtual service's family: write "
                  "real=ADDRESS:PORT"},
        BadImport{"FallbackOfTheOtherFamily", "fallback=[::1]:80\n",
                  "ld.cf:1: fallback takes an IPv4 address; write an IPv6 one as fallback6="},
        BadImport{"OpsOnTcp", "virtual=192.0.2.1:80\n\tops=yes\n",
                  "ld.cf:2: ops = yes works with protocol = udp only (one-packet scheduling)"},
        BadImport{"ProtocolFwmOnAddress", "virtual=192.0.2.1:80\n\tprotocol=fwm\n",
                  "ld.cf:2: protocol \"fwm\" is not tcp or udp (fwm is for a firewall-mark "
                  "virtual=)"},
        BadImport{"NetmaskNotContiguous", "virtual=192.0.2.1:80\n\tnetmask=255.0.255.0\n",
                  "ld.cf:2: netmask \"255.0.255.0\" is not a contiguous IPv4 netmask: write it "
                  "like 255.255.255.0"}),
    [](const ::testing::TestParamInfo<BadImport>& i) { return std::string(i.param.name); });

TEST(LdirectordImport, AMissingFileIsAnErrorNamingIt) {
  test::FakeSourceReader reader;
  ImportResult r = importLdirectord("/etc/ha.d/ldirectord.cf", reader, ImportOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].text(), "/etc/ha.d/ldirectord.cf: no such file");
}

TEST(LdirectordImport, ReportsEveryErrorSortedByLine) {
  ImportResult r = importText("virtual=192.0.2.1:80\n\tscheduler=fair\nbogus=1\n");
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].line, 2);
  EXPECT_EQ(r.errors[1].line, 3);
}

TEST(LdirectordMapping, EveryRowHasAKeywordAndEveryDifferenceOrDropANote) {
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (const auto& m : ldirectordMappings()) {
    EXPECT_FALSE(m.keyword.empty());
    EXPECT_TRUE(seen.insert({m.block, m.keyword}).second) << "twice: " << m.keyword;
    if (m.fate != Fate::kMapped) {
      EXPECT_FALSE(m.note.empty()) << m.keyword;
    }
    EXPECT_EQ(m.note.find('\n'), std::string_view::npos) << m.keyword;
    EXPECT_LE(m.note.size(), 100u) << "keep the table's notes short: " << m.keyword;
  }
}

TEST(LdirectordMapping, NamesOnlyKeysThatTheReferenceDocuments) {
  std::string reference = readFile(REFERENCE_MD);
  ASSERT_FALSE(reference.empty());
  for (const auto& m : ldirectordMappings()) {
    if (m.key.empty()) continue;
    EXPECT_NE(reference.find(std::string(m.key)), std::string::npos) << m.key;
  }
}

TEST(LdirectordMapping, CoversWhatLdirectordsManPageDescribes) {
  for (const char* k : {"checkinterval",
                        "checktimeout",
                        "negotiatetimeout",
                        "connecttimeout",
                        "failurecount",
                        "fallback",
                        "quiescent = yes",
                        "quiescent = no",
                        "virtualhost",
                        "httpmethod",
                        "checkport",
                        "checkcommand",
                        "login",
                        "passwd",
                        "database",
                        "scheduler",
                        "persistent",
                        "netmask",
                        "protocol",
                        "request",
                        "receive",
                        "emailalert",
                        "checktype = connect",
                        "checktype = negotiate",
                        "checktype = external",
                        "checktype = off",
                        "checktype = on",
                        "checktype = ping",
                        "checktype = N",
                        "service = http",
                        "service = https",
                        "service = smtp",
                        "service = dns",
                        "service = none"}) {
    EXPECT_NE(findMapping(Source::kLdirectord, "virtual", k), nullptr) << k;
  }
  for (const char* k : {"emailalert", "logfile", "autoreload", "callback", "fork", "supervised",
                        "cleanstop", "checkinterval", "fallback", "maintenancedir"}) {
    EXPECT_NE(findMapping(Source::kLdirectord, "global", k), nullptr) << k;
  }
  EXPECT_NE(findMapping(Source::kLdirectord, "", "virtual"), nullptr);
}

TEST(LdirectordImport, NeverThrowsOnGarbage) {
  for (const char* text :
       {"", "\n\n", "virtual=1\n", "virtual=1\n\tchecktype=0\n",
        "virtual=[::1]:1\n\treal=[::1] ipip\n\tfallback6=[::2]\n",
        "virtual=1.2.3.4:5\n\tcheckport=0\n", "virtual=1.2.3.4:5\n\tschedflags=,\n",
        "virtual=1.2.3.4:5\n\treal=1.2.3.4:5 gate 99999999\n"}) {
    ImportResult r = importText(text);
    EXPECT_TRUE(!r.errors.empty() || !r.conf.empty()) << text;
  }
}

}  // namespace
}  // namespace tandem::importer
