#include "keepalived_parser.h"

#include <gtest/gtest.h>

#include "fake_source_reader.h"

namespace tandem::importer {
namespace {

KaParse parse(test::FakeSourceReader& fs, const std::string& text, const std::string& id = "") {
  fs.files["k.conf"] = text;
  return parseKeepalived("k.conf", fs, id);
}

std::string firstError(const KaParse& p) { return p.errors.empty() ? "" : p.errors[0].text(); }

TEST(KeepalivedParser, BlocksNestWithTheirLinesAndArguments) {
  test::FakeSourceReader fs;
  KaParse p = parse(fs,
                    "! comment\n"
                    "virtual_server 203.0.113.10 80 {\n"
                    "  lb_algo rr # trailing comment\n"
                    "  real_server 198.51.100.1 80 {\n"
                    "    weight 2\n"
                    "  }\n"
                    "}\n");
  ASSERT_TRUE(p.errors.empty()) << firstError(p);
  ASSERT_EQ(p.statements.size(), 1u);
  const KaStatement& vs = p.statements[0];
  EXPECT_EQ(vs.keyword, "virtual_server");
  EXPECT_EQ(vs.args, (std::vector<std::string>{"203.0.113.10", "80"}));
  EXPECT_EQ(vs.line, 2);
  ASSERT_EQ(vs.children.size(), 2u);
  EXPECT_EQ(vs.children[0].args, (std::vector<std::string>{"rr"}));
  EXPECT_EQ(vs.children[1].children[0].keyword, "weight");
  EXPECT_EQ(vs.children[1].children[0].line, 5);
}

TEST(KeepalivedParser, BraceOnItsOwnLineOpensTheStatementAbove) {
  test::FakeSourceReader fs;
  KaParse p = parse(fs, "global_defs\n{\n  router_id a\n}\nvrrp_instance V { interface eth0 }\n");
  ASSERT_TRUE(p.errors.empty()) << firstError(p);
  ASSERT_EQ(p.statements.size(), 2u);
  EXPECT_TRUE(p.statements[0].has_block);
  EXPECT_EQ(p.statements[0].children[0].keyword, "router_id");
  EXPECT_EQ(p.statements[1].children[0].args, (std::vector<std::string>{"eth0"}));
}

TEST(KeepalivedParser, QuotedStringIsOneArgument) {
  test::FakeSourceReader fs;
  KaParse p = parse(fs, "vrrp_instance V {\n notify_master \"/bin/run a { b } # c\"\n}\n");
  ASSERT_TRUE(p.errors.empty()) << firstError(p);
  EXPECT_EQ(p.statements[0].children[0].args, (std::vector<std::string>{"/bin/run a { b } # c"}));
}

TEST(KeepalivedParser, UnclosedBlockIsAnErrorAtItsOpeningLine) {
  test::FakeSourceReader fs;
  KaParse p = parse(fs, "\nvirtual_server 203.0.113.10 80 {\n  lb_algo rr\n");
  EXPECT_EQ(firstError(p),
            "k.conf:2: the block of virtual_server opened here is never closed; add its }");
}

TEST(KeepalivedParser, StrayClosingBraceIsAnError) {
  test::FakeSourceReader fs;
  KaParse p = parse(fs, "global_defs {\n}\n}\n");
  EXPECT_EQ(firstError(p),
            "k.conf:3: this } closes no block; remove it, or add the { it should close");
}

TEST(KeepalivedParser, UnterminatedQuoteIsAnError) {
  test::FakeSourceReader fs;
  KaParse p = parse(fs, "a {\n notify \"/bin/x\n}\n");
  EXPECT_EQ(firstError(p),
            "k.conf:2: a quoted string is not closed on its line; add the closing \"");
}

TEST(KeepalivedParser, IncludeFollowsGlobsRelativeToTheIncludingFile) {
  test::FakeSourceReader fs;
  fs.files["etc/k/conf.d/b.conf"] = "vrrp_instance B {\n}\n";
  fs.files["etc/k/conf.d/a.conf"] = "vrrp_instance A {\n}\n";
  fs.files["etc/k/keepalived.conf"] = "include conf.d/*.conf\nglobal_defs {\n}\n";
  KaParse p = parseKeepalived("etc/k/keepalived.conf", fs, "");
  ASSERT_TRUE(p.errors.empty()) << firstError(p);
  ASSERT_EQ(p.statements.size(), 3u);
  EXPECT_EQ(p.statements[0].args[0], "A");
  EXPECT_EQ(p.statements[0].file, "etc/k/conf.d/a.conf");
  EXPECT_EQ(p.statements[1].args[0], "B");
  EXPECT_EQ(p.statements[2].keyword, "global_defs");
  ASSERT_EQ(p.consumed.size(), 1u);
  EXPECT_EQ(p.consumed[0].what, "include conf.d/*.conf (2 files)");
}

TEST(KeepalivedParser, IncludeLoopIsAnError) {
  test::FakeSourceReader fs;
  fs.files["b.conf"] = "include k.conf\n";
  KaParse p = parse(fs, "include b.conf\n");
  EXPECT_EQ(firstError(p), "b.conf:1: k.conf includes itself; remove the include that loops");
}

TEST(KeepalivedParser, MissingTopFileNamesIt) {
  test::FakeSourceReader fs;
  KaParse p = parseKeepalived("nope.conf", fs, "");
  EXPECT_EQ(firstError(p), "nope.conf: no such file");
}

TEST(KeepalivedParser, ParametersAreSubstituted) {
  test::FakeSourceReader fs;
  KaParse p = parse(
      fs,
      "$PORT=8080\nvirtual_server 203.0.113.10 $PORT {\n real_server 198.51.100.1 ${PORT}\n}\n");
  ASSERT_TRUE(p.errors.empty()) << firstError(p);
  EXPECT_EQ(p.statements[0].args[1], "8080");
  EXPECT_EQ(p.statements[0].children[0].args[1], "8080");
  ASSERT_EQ(p.consumed.size(), 1u);
  EXPECT_EQ(p.consumed[0].line, 1);
}

TEST(KeepalivedParser, ConfigIdLinesApplyOnlyToTheirId) {
  test::FakeSourceReader fs;
  std::string text = "@lb1 router_id one\n@^lb1 router_id other\n";
  KaParse none = parse(fs, text);
  EXPECT_TRUE(none.statements.empty());
  EXPECT_EQ(none.skipped.size(), 2u);
  KaParse lb1 = parse(fs, text, "lb1");
  ASSERT_EQ(lb1.statements.size(), 1u);
  EXPECT_EQ(lb1.statements[0].args[0], "one");
  KaParse lb2 = parse(fs, text, "lb2");
  ASSERT_EQ(lb2.statements.size(), 1u);
  EXPECT_EQ(lb2.statements[0].args[0], "other");
}

TEST(KeepalivedParser, DeepNestingIsRefusedNotOverflowed) {
  test::FakeSourceReader fs;
  std::string text;
  for (int i = 0; i < 100; ++i) text += "a {\n";
  KaParse p = parse(fs, text);
  EXPECT_EQ(firstError(p), "k.conf:65: blocks nest deeper than 64 levels; a } is probably missing");
}

}  // namespace
}  // namespace tandem::importer
