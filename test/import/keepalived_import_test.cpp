#include <gtest/gtest.h>

#include <filesystem>

#include "fake_source_reader.h"
#include "golden_file.h"
#include "importer.h"

namespace tandem::importer {
namespace {

namespace fs = std::filesystem;
using cli::testing::expectGoldenText;
using cli::testing::readFile;

const fs::path kDir = fs::path(GOLDEN_DIR) / "keepalived";

// Every input under golden/keepalived, by its path relative to it, so that the report names
// the same files on every machine.
test::FakeSourceReader goldenFiles() {
  test::FakeSourceReader reader;
  for (const auto& e : fs::recursive_directory_iterator(kDir)) {
    if (e.is_regular_file() && e.path().extension() == ".conf") {
      reader.files[fs::relative(e.path(), kDir).string()] = readFile(e.path());
    }
  }
  return reader;
}

void expectGolden(const std::string& name, const std::vector<std::string>& files,
                  const std::string& config_id = "") {
  test::FakeSourceReader reader = goldenFiles();
  ImportOptions options;
  options.config_id = config_id;
  ImportResult r = importKeepalived(files, reader, options);
  ASSERT_TRUE(r.ok()) << r.errors[0].text();
  expectGoldenText(r.conf, kDir / (name + ".toml"));
  expectGoldenText(r.report.text(), kDir / (name + ".report"));
  for (const auto& l : r.report.lines()) {
    EXPECT_NE(l.reason, "not in the importer's mapping")
        << l.file << ":" << l.line << " " << l.construct;
  }
}

TEST(KeepalivedImport, OneDirectorsFileBecomesACompleteConfig) {
  expectGolden("web-pair-lb1", {"web-pair-lb1.conf"});
}

TEST(KeepalivedImport, BothDirectorsFilesGiveBothNodesAndNameTheirDifferences) {
  expectGolden("web-pair", {"web-pair-lb1.conf", "web-pair-lb2.conf"});
}

TEST(KeepalivedImport, GroupsExpandAndIncludesAndParametersAreFollowed) {
  expectGolden("groups", {"groups.conf"});
}

TEST(KeepalivedImport, ConfigIdTakesItsOwnLines) {
  expectGolden("groups-lb1", {"groups.conf"}, "lb1");
}

ImportResult importText(const std::string& text) {
  test::FakeSourceReader reader;
  reader.files["k.conf"] = text;
  return importKeepalived({"k.conf"}, reader, {});
}

std::string firstError(const ImportResult& r) { return r.errors.empty() ? "" : r.errors[0].text(); }

TEST(KeepalivedImport, BadValuesAreErrorsWithTheirLine) {
  EXPECT_EQ(firstError(importText("virtual_server 203.0.113.300 80 {\n}\n")),
            "k.conf:1: virtual_server 203.0.113.300: not an IP address");
  EXPECT_EQ(firstError(importText("virtual_server 203.0.113.3 80 {\n lb_kind NATT\n}\n")),
            "k.conf:2: lb_kind NATT: not NAT, DR or TUN");
  EXPECT_EQ(firstError(importText("virtual_server 203.0.113.3 80 {\n delay_loop soon\n}\n")),
            "k.conf:2: delay_loop soon: not a time in seconds (as 3 or 1.5, up to a day)");
  EXPECT_EQ(
      firstError(importText("virtual_server 203.0.113.3 80 {\n real_server host 80 {\n }\n}\n")),
      "k.conf:2: real_server needs an IP address and port, as real_server 198.51.100.21 80");
  EXPECT_EQ(firstError(importText("virtual_server group G {\n}\n")),
            "k.conf:1: virtual_server group G: no virtual_server_group of that name; define it");
  EXPECT_EQ(
      firstError(importText("vrrp_instance V {\n virtual_ipaddress {\n  203.0.113.1\n }\n}\n")),
      "k.conf:3: 203.0.113.1: no interface (name one with dev, or interface in the instance)");
  EXPECT_EQ(firstError(importText("virtual_server_group G {\n 203.0.113.1-250 80\n}\n")),
            "");  // 250 addresses: within the bound
  EXPECT_EQ(
      firstError(importText("virtual_server_group G {\n 203.0.113.9-3 80\n}\n")),
      "k.conf:2: 203.0.113.9-3: a range of at most 256 addresses, upwards within the last part");
}

TEST(KeepalivedImport, ThreeFilesAreRefused) {
  test::FakeSourceReader reader;
  ImportResult r = importKeepalived({"a", "b", "c"}, reader, {});
  EXPECT_EQ(firstError(r), "import takes one keepalived.conf, or one per director (two)");
}

TEST(KeepalivedImport, RetryBecomesFallAndTheReportGivesBothWindows) {
  ImportResult r = importText(
      "virtual_server 203.0.113.3 80 {\n delay_loop 2\n real_server 198.51.100.1 80 {\n"
      "  TCP_CHECK {\n   retry 3\n   delay_before_retry 1\n  }\n }\n}\n");
  ASSERT_TRUE(r.ok()) << firstError(r);
  EXPECT_NE(r.conf.find("fall = 4"), std::string::npos) << r.conf;
  EXPECT_NE(r.conf.find("interval = \"2s\""), std::string::npos) << r.conf;
  EXPECT_NE(r.report.text().find("tandem takes a failed real server out after 4 failed checks 2s "
                                 "apart: within 8s of a refusal (keepalived: within 5s)"),
            std::string::npos)
      << r.report.text();
}

}  // namespace
}  // namespace tandem::importer
