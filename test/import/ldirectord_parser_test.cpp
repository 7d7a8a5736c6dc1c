// The ldirectord.cf parser: its structure, line numbers, and every kind of bad line.
#include "ldirectord_parser.h"

#include <gtest/gtest.h>

namespace tandem::importer::ldirectord {
namespace {

std::vector<std::string> errorTexts(const ParseResult& r) {
  std::vector<std::string> out;
  for (const auto& e : r.errors) out.push_back(e.text());
  return out;
}

TEST(LdirectordParser, ReadsGlobalsWithOrWithoutSpacesAroundTheEqualsSign) {
  ParseResult r =
      parseConfig("checktimeout=3\ncheckinterval = 1\n  \n# c\nquiescent\t=\tno\n", "l.cf");
  ASSERT_TRUE(r.errors.empty());
  ASSERT_EQ(r.config.globals.size(), 3u);
  EXPECT_EQ(r.config.globals[0].key, "checktimeout");
  EXPECT_EQ(r.config.globals[0].value, "3");
  EXPECT_EQ(r.config.globals[0].line, 1);
  EXPECT_EQ(r.config.globals[1].value, "1");
  EXPECT_EQ(r.config.globals[2].key, "quiescent");
  EXPECT_EQ(r.config.globals[2].value, "no");
  EXPECT_EQ(r.config.globals[2].line, 5);
}

TEST(LdirectordParser, GivesIndentedLinesToTheVirtualAboveWithTheirLineNumbers) {
  ParseResult r = parseConfig(
      "virtual=192.0.2.1:80\n"
      "\treal=10.0.0.1:80 gate\n"
      "    # a comment inside the block\n"
      "    service = http   # and one after a value\n"
      "checkinterval=2\n"
      "virtual = 192.0.2.1:443\n"
      "        receive = \"a # b\"\n",
      "l.cf");
  ASSERT_TRUE(r.errors.empty()) << errorTexts(r)[0];
  ASSERT_EQ(r.config.virtuals.size(), 2u);
  const VirtualBlock& v = r.config.virtuals[0];
  EXPECT_EQ(v.line, 1);
  EXPECT_EQ(v.keyword, "virtual");
  ASSERT_TRUE(v.address.address);
  EXPECT_EQ(v.address.address->toString(), "192.0.2.1:80");
  ASSERT_EQ(v.reals.size(), 1u);
  EXPECT_EQ(v.reals[0].line, 2);
  ASSERT_EQ(v.directives.size(), 1u);
  EXPECT_EQ(v.directives[0].key, "service");
  EXPECT_EQ(v.directives[0].value, "http");
  EXPECT_EQ(v.directives[0].line, 4);
  ASSERT_EQ(r.config.globals.size(), 1u);
  EXPECT_EQ(r.config.globals[0].line, 5);
  ASSERT_EQ(r.config.virtuals[1].directives.size(), 1u);
  EXPECT_EQ(r.config.virtuals[1].directives[0].value, "\"a # b\"");
}

TEST(LdirectordParser, ReadsFirewallMarksAndIpv6Virtuals) {
  ParseResult r = parseConfig(
      "virtual=1\n real=10.0.0.1 gate\nvirtual6=2\nvirtual6=[2001:db8::10]:80\n"
      "\treal6=[2001:db8::11]:8080 masq\n",
      "l.cf");
  ASSERT_TRUE(r.errors.empty()) << errorTexts(r)[0];
  ASSERT_EQ(r.config.virtuals.size(), 3u);
  EXPECT_EQ(r.config.virtuals[0].address.fwmark, 1u);
  EXPECT_FALSE(r.config.virtuals[0].address.ipv6);
  EXPECT_FALSE(r.config.virtuals[0].reals[0].spec.port);
  EXPECT_EQ(r.config.virtuals[1].address.fwmark, 2u);
  EXPECT_TRUE(r.config.virtuals[1].address.ipv6);
  EXPECT_TRUE(r.config.virtuals[2].address.ipv6);
  EXPECT_EQ(r.config.virtuals[2].address.address->toString(), "[2001:db8::10]:80");
  EXPECT_EQ(r.config.virtuals[2].reals[0].spec.addresses[0].toString(), "2001:db8::11");
  EXPECT_EQ(r.config.virtuals[2].reals[0].spec.port, 8080);
}

TEST(LdirectordParser, ReadsEveryPartOfARealServer) {
  auto r = parseRealServer("10.0.0.1:8080 masq 3 \"/alive\", \"yes\" l:10 u:20");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->addresses.size(), 1u);
  EXPECT_EQ(r->port, 8080);
  EXPECT_EQ(r->method, "masq");
  EXPECT_EQ(r->weight, 3);
  EXPECT_EQ(r->request, "/alive");
  EXPECT_EQ(r->receive, "yes");
  EXPECT_EQ(r->lower_threshold, 10);
  EXPECT_EQ(r->upper_threshold, 20);

  auto spaced = parseRealServer("10.0.0.1:80 gate \"a.html\" \"b c\"");
  ASSERT_TRUE(spaced) << spaced.error().message;
  EXPECT_FALSE(spaced->weight);
  EXPECT_EQ(spaced->request, "a.html");
  EXPECT_EQ(spaced->receive, "b c");
}

TEST(LdirectordParser, ExpandsAnAddressRange) {
  auto r = parseRealServer("192.168.1.254->192.168.2.1:80 gate");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->range);
  ASSERT_EQ(r->addresses.size(), 4u);
  EXPECT_EQ(r->addresses[0].toString(), "192.168.1.254");
  EXPECT_EQ(r->addresses[3].toString(), "192.168.2.1");
  EXPECT_EQ(r->port, 80);
}

TEST(LdirectordParser, ReadsAFallbackWithOrWithoutPortAndMethod) {
  auto a = parseFallback("127.0.0.1:80 gate");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->port, 80);
  EXPECT_EQ(a->method, "gate");
  auto b = parseFallback("\"[::1]\"");
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_FALSE(b->port);
  EXPECT_EQ(b->address.toString(), "::1");
}

struct BadLine {
  const char* name;
  const char* text;
  const char* error;
};

class LdirectordParserBadInput : public ::testing::TestWithParam<BadLine> {};

TEST_P(LdirectordParserBadInput, NamesTheLineAndSaysWhatToWrite) {
  ParseResult r = parseConfig(GetParam().text, "ld.cf");
  ASSERT_EQ(r.errors.size(), 1u) << GetParam().name;
  EXPECT_EQ(r.errors[0].text(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, LdirectordParserBadInput,
    ::testing::Values(
        BadLine{"BodyLineWithoutVirtual", "checktimeout=3\n\treal=10.0.0.1:80 gate\n",
                "ld.cf:2: indented \"real\" is not under a virtual= line: indent only the lines "
                "of a virtual service, or add its virtual=ADDRESS:PORT line above"},
        BadLine{"NotKeyValue", "virtual=192.0.2.1:80\n\treal 10.0.0.1:80 gate\n",
                "ld.cf:2: \"real 10.0.0.1:80 gate\" is not a directive: ldirectord.cf lines are "
                "KEY = VALUE, with the lines of a virtual service indented under its virtual= "
                "line"},
        BadLine{"EmptyValue", "checkinterval =\n",
                "ld.cf:1: checkinterval has no value: write checkinterval = VALUE, or remove the "
                "line"},
        BadLine{"PortName", "virtual=192.0.2.1:http\n",
                "ld.cf:1: port \"http\" is not a number; tandem does not look names up in "
                "/etc/services: write the port number (80 for http, 443 for https)"},
        BadLine{"PortOutOfRange", "virtual=192.0.2.1:70000\n",
                "ld.cf:1: port 70000 is out of range: use 1 to 65535"},
        BadLine{"VirtualWithoutPort", "virtual=192.0.2.1\n",
                "ld.cf:1: virtual service \"192.0.2.1\" has no port: write ADDRESS:PORT, "
                "[IPV6]:PORT or a firewall mark number"},
        BadLine{"HostName", "virtual=www.example.com:80\n",
                "ld.cf:1: \"www.example.com\" is not an IP address; tandem takes literal "
                "addresses only (a director must not depend on DNS to fail over): write the "
                "address it resolves to"},
        BadLine{"Ipv6WithoutBrackets", "virtual6=2001:db8::1:80\n",
                "ld.cf:1: IPv6 address \"2001:db8::1:80\" must be in brackets: [ADDRESS]:PORT"},
        BadLine{"Virtual6WithIpv4", "virtual6=192.0.2.1:80\n",
                "ld.cf:1: virtual6 takes an IPv6 address: write virtual=192.0.2.1:80"},
        BadLine{"FwmarkZero", "virtual=0\n",
                "ld.cf:1: firewall mark 0 is out of range: use 1 to 4294967295"},
        BadLine{"RealWithoutMethod", "virtual=192.0.2.1:80\n\treal=10.0.0.1:80\n",
                "ld.cf:2: the forwarding method is missing: write gate (dr), masq (nat) or ipip "
                "(tun) after the address"},
        BadLine{"RealBadMethod", "virtual=192.0.2.1:80\n\treal=10.0.0.1:80 route\n",
                "ld.cf:2: forwarding method \"route\" is not one of gate, masq or ipip; the form "
                "is real=ADDRESS[:PORT] gate|masq|ipip [WEIGHT] [\"request\", \"receive\"]"},
        BadLine{"RealHostRange", "virtual=192.0.2.1:3306\n\treal=sql01->sql03:3306 gate 10\n",
                "ld.cf:2: \"sql01\" is not an IP address; tandem takes literal addresses only (a "
                "director must not depend on DNS to fail over): write the address it resolves "
                "to"},
        BadLine{"RangeBackwards", "virtual=192.0.2.1:80\n\treal=10.0.0.9->10.0.0.1:80 gate\n",
                "ld.cf:2: range \"10.0.0.9->10.0.0.1:80\" ends before it starts: write "
                "LOW->HIGH"},
        BadLine{"RangeTooLarge", "virtual=192.0.2.1:80\n\treal=10.0.0.0->10.255.0.0:80 gate\n",
                "ld.cf:2: range \"10.0.0.0->10.255.0.0:80\" holds 16711681 addresses; at most "
                "1024 are imported: split it, or check the bounds"},
        BadLine{"Ipv6Range",
                "virtual6=[2001:db8::1]:80\n\treal6=[2001:db8::2]->[2001:db8::9]:80 "
                "gate\n",
                "ld.cf:2: ranges are IPv4 only (as in ldirectord): list each IPv6 real server "
                "on its own real6= line"},
        BadLine{"RequestWithoutReceive",
                "virtual=192.0.2.1:80\n\treal=10.0.0.1:80 gate 1 \"/index.html\"\n",
                "ld.cf:2: a request needs its receive string: write \"request\", \"receive\", "
                "both quoted"},
        BadLine{"TrailingJunk", "virtual=192.0.2.1:80\n\treal=10.0.0.1:80 gate 1 extra\n",
                "ld.cf:2: unexpected \"extra\" in the real server; the form is "
                "real=ADDRESS[:PORT] gate|masq|ipip [WEIGHT] [\"request\", \"receive\"] "
                "[l:LOW] [u:HIGH]"},
        BadLine{"RealPortName", "virtual=192.0.2.1:80\n\treal=10.0.0.1:www gate\n",
                "ld.cf:2: port \"www\" is not a number; tandem does not look names up in "
                "/etc/services: write the port number (80 for http, 443 for https)"}),
    [](const ::testing::TestParamInfo<BadLine>& i) { return std::string(i.param.name); });

TEST(LdirectordParser, SkipsTheLinesOfAVirtualWhoseHeadIsAnError) {
  ParseResult r = parseConfig("virtual=bad:80\n\treal=10.0.0.1:80 gate\n\tservice=http\n", "l.cf");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line, 1);
}

TEST(LdirectordParser, ReportsEveryBadLineNotJustTheFirst) {
  ParseResult r = parseConfig("a b\nvirtual=192.0.2.1:x\nc d\n", "l.cf");
  ASSERT_EQ(r.errors.size(), 3u);
  EXPECT_EQ(r.errors[0].line, 1);
  EXPECT_EQ(r.errors[1].line, 2);
  EXPECT_EQ(r.errors[2].line, 3);
}

TEST(LdirectordParser, SurvivesHostileBytes) {
  const std::string inputs[] = {std::string("virtual=\0\n", 10),
                                "=\n",
                                "\t=\n",
                                "[",
                                "\"",
                                "virtual=[\n",
                                "virtual=[]:1\n",
                                "virtual=99999999999999999\n",
                                "virtual=1.2.3.4:99999999999999\n\treal=1.2.3.4:1 gate "
                                "99999999999999999999\n",
                                "virtual=1.2.3.4:1\n\treal=1.2.3.4->:1 gate\n",
                                "virtual=1.2.3.4:1\n\treal=->1.2.3.4 gate\n",
                                "virtual=1.2.3.4:1\n\treal=\"\" \"\n"};
  for (const auto& in : inputs) {
    ParseResult r = parseConfig(in, "l.cf");
    for (const auto& e : r.errors) EXPECT_FALSE(e.message.empty());
  }
}

}  // namespace
}  // namespace tandem::importer::ldirectord
