// The dns checker's pure half on replies built by hand: the rcode from the header, each answer
// record's presentation form (A, AAAA, MX, TXT, CNAME, SRV, SOA, and an unknown type), matching
// expect_answer, and garbage of every kind (short, cut off, a bad pointer, a record whose data
// does not fit) failing with what is wrong, never a crash. Stray datagrams: another id is
// ignored, the probe's own id judged.
#include "health/dns_answer.h"

#include <gtest/gtest.h>

#include "resources/health/dns_message.h"

namespace tandem::resources::health {
namespace {

using test::dns::Bytes;
using test::dns::reply;

constexpr uint16_t kA = 1, kCname = 5, kSoa = 6, kMx = 15, kTxt = 16, kAaaa = 28, kSrv = 33;

config::Check dnsCheck(std::string type = "A", std::string rcode = "NOERROR",
                       std::string answer = "") {
  config::Check c;
  c.type = config::CheckType::kDns;
  c.query_name = "www.example.test";
  c.query_type = std::move(type);
  c.expect_rcode = std::move(rcode);
  c.expect_answer = std::move(answer);
  return c;
}

TEST(DnsAnswerTest, NamesMapToTheirCodes) {
  EXPECT_EQ(dnsTypeCode("A"), 1);
  EXPECT_EQ(dnsTypeCode("AAAA"), 28);
  EXPECT_EQ(dnsTypeCode("SRV"), 33);
  EXPECT_EQ(dnsTypeCode("ANY"), std::nullopt);
  EXPECT_EQ(dnsRcodeCode("NXDOMAIN"), 3);
  EXPECT_EQ(dnsRcodeCode("REFUSED"), 5);
  EXPECT_EQ(dnsRcodeCode("NOTAUTH"), std::nullopt) << "not one a check may expect";
  EXPECT_EQ(dnsRcodeName(9), "NOTAUTH");
  EXPECT_EQ(dnsRcodeName(12), "RCODE12");
}

TEST(DnsAnswerTest, TheRcodeIsTheLowFourBitsOfTheFourthByte) {
  for (int rcode = 0; rcode < 16; ++rcode) {
    Bytes m = reply(7, rcode, "www.example.test", kA, {});
    m[3] |= 0x70;  // Z, AD, CD set: not part of the rcode
    auto r = parseDnsReply(m);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->rcode, rcode);
    EXPECT_EQ(r->id, 7);
    EXPECT_TRUE(r->response);
  }
}

TEST(DnsAnswerTest, AHealthyReplySaysItsRcodeAndAnswers) {
  Bytes m = reply(1, 0, "www.example.test", kA, {{kA, test::dns::address("198.51.100.7")}});
  DnsVerdict v = judgeDnsReply(m, dnsCheck());
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.reason, "NOERROR, 1 answer");
  EXPECT_EQ(judgeDnsReply(reply(1, 0, "www.example.test", kA, {}), dnsCheck()).reason,
            "NOERROR, 0 answers")
      << "without expect_answer the answer section is not required";
}

TEST(DnsAnswerTest, AnotherRcodeFailsNamingBoth) {
  Bytes m = reply(1, 3, "www.example.test", kA, {});
  DnsVerdict v = judgeDnsReply(m, dnsCheck());
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason, "rcode NXDOMAIN, expected NOERROR");
  v = judgeDnsReply(m, dnsCheck("A", "NXDOMAIN"));
  EXPECT_TRUE(v.ok) << v.reason;
  EXPECT_EQ(v.reason, "NXDOMAIN, 0 answers");
  EXPECT_EQ(judgeDnsReply(reply(1, 11, "www.example.test", kA, {}), dnsCheck()).reason,
            "rcode RCODE11, expected NOERROR");
}

TEST(DnsAnswerTest, ExpectAnswerMatchesAnARecordsAddress) {
  Bytes m = reply(1, 0, "www.example.test", kA,
                  {{kCname, test::dns::name("web.example.test")},
                   {kA, test::dns::address("198.51.100.8")},
                   {kA, test::dns::address("198.51.100.7")}});
  EXPECT_TRUE(judgeDnsReply(m, dnsCheck("A", "NOERROR", "198.51.100.7")).ok);
  EXPECT_TRUE(judgeDnsReply(m, dnsCheck("A", "NOERROR", "web.example")).ok)
      << "the CNAME in the answer section is a record like the others";
  DnsVerdict v = judgeDnsReply(m, dnsCheck("A", "NOERROR", "198.51.100.9"));
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason,
            "no answer contains \"198.51.100.9\" (got web.example.test, 198.51.100.8, "
            "198.51.100.7)");
  v = judgeDnsReply(reply(1, 0, "www.example.test", kA, {}),
                    dnsCheck("A", "NOERROR", "198.51.100.7"));
  EXPECT_EQ(v.reason, "no answer contains \"198.51.100.7\" (got none)");
}

TEST(DnsAnswerTest, AaaaRecordsReadAsIpv6Text) {
  Bytes m = reply(1, 0, "www.example.test", kAaaa, {{kAaaa, test::dns::address("2001:db8::7")}});
  auto r = parseDnsReply(m);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->answers.size(), 1u);
  EXPECT_EQ(r->answers[0], "2001:db8::7");
  EXPECT_TRUE(judgeDnsReply(m, dnsCheck("AAAA", "NOERROR", "2001:db8::7")).ok);
}

TEST(DnsAnswerTest, MxRecordsReadAsPreferenceAndExchange) {
  Bytes m = reply(1, 0, "example.test", kMx,
                  {{kMx, test::dns::mx(10, "mail.example.test")},
                   {kMx, test::dns::mx(20, "backup.example.test")}});
  auto r = parseDnsReply(m);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->answers,
            (std::vector<std::string>{"10 mail.example.test", "20 backup.example.test"}));
  EXPECT_TRUE(judgeDnsReply(m, dnsCheck("MX", "NOERROR", "10 mail.example.test")).ok);
}

TEST(DnsAnswerTest, TxtRecordsReadAsTheirStringsJoined) {
  Bytes m = reply(1, 0, "example.test", kTxt,
                  {{kTxt, test::dns::txt({"v=spf1 ip4:198.51.100.0/24", " -all"})},
                   {kTxt, test::dns::txt({std::string("bin\x01", 4)})}});
  auto r = parseDnsReply(m);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->answers, (std::vector<std::string>{"v=spf1 ip4:198.51.100.0/24 -all", "bin\\001"}));
  EXPECT_TRUE(judgeDnsReply(m, dnsCheck("TXT", "NOERROR", "198.51.100.0/24 -all")).ok);
}

TEST(DnsAnswerTest, SrvSoaAndUnknownTypesHaveTheirPresentationForms) {
  Bytes srv = {0, 1, 0, 5, 0x13, 0xc4};  // priority 1, weight 5, port 5060
  Bytes target = test::dns::name("sip.example.test");
  srv.insert(srv.end(), target.begin(), target.end());
  Bytes soa = test::dns::name("ns1.example.test");
  Bytes rname = test::dns::name("hostmaster.example.test");
  soa.insert(soa.end(), rname.begin(), rname.end());
  for (uint8_t v : {0, 0, 0, 42, 0, 0, 14, 16, 0, 0, 2, 88, 0, 1, 81, 128, 0, 0, 1, 44}) {
    soa.push_back(v);
  }
  Bytes m =
      reply(1, 0, "example.test", kSrv, {{kSrv, srv}, {kSoa, soa}, {99, {0xde, 0xad}}, {99, {}}});
  auto r = parseDnsReply(m);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->answers, (std::vector<std::string>{
                            "1 5 5060 sip.example.test",
                            "ns1.example.test hostmaster.example.test 42 3600 600 86400 300",
                            "\\# 2 dead", "\\# 0"}));
}

TEST(DnsAnswerTest, GarbageFailsSayingWhatIsWrong) {
  auto why = [](const Bytes& m) {
    auto r = parseDnsReply(m);
    return r ? std::string("parsed") : r.error().message;
  };
  const Bytes good =
      reply(1, 0, "www.example.test", kA, {{kA, test::dns::address("198.51.100.7")}});
  EXPECT_EQ(why({}), "an empty datagram");
  EXPECT_EQ(why({'j', 'u', 'n', 'k', '\n'}), "5 bytes, shorter than a DNS header");
  // Cut off anywhere after the header, the reply fails and never reads past its end.
  for (size_t len = 12; len < good.size(); ++len) {
    EXPECT_NE(why(Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len))), "parsed")
        << len;
  }
  EXPECT_EQ(why(Bytes(good.begin(), good.end() - 1)),
            "answer 1 runs past the end (4 bytes of data, 3 left)");

  Bytes forward = good;
  forward[good.size() - 16] = 0xc0;  // the answer's name pointer, now to itself
  forward[good.size() - 15] = static_cast<uint8_t>(good.size() - 16);
  EXPECT_EQ(why(forward), "answer 1: name compression points forward");

  Bytes label = good;
  label[12] = 0x41;  // a label type RFC 1035 does not define
  EXPECT_EQ(why(label), "question 1: name has a label of an unknown kind");

  Bytes short_a = reply(1, 0, "www.example.test", kA, {{kA, {198, 51, 100}}});
  EXPECT_EQ(why(short_a), "answer 1: A record of 3 bytes");
  Bytes long_mx = test::dns::mx(10, "mail.example.test");
  long_mx.push_back(0);
  EXPECT_EQ(why(reply(1, 0, "example.test", kMx, {{kMx, long_mx}})),
            "answer 1: MX record longer than its fields");
  Bytes bad_txt = {9, 'a'};
  EXPECT_EQ(why(reply(1, 0, "example.test", kTxt, {{kTxt, bad_txt}})),
            "answer 1: TXT string runs past its record");

  // A name that loops through a pointer back to its own labels ends at the length limit.
  Bytes loop = reply(1, 0, "www.example.test", kA, {});
  const size_t at = loop.size();
  loop[7] = 1;  // ancount
  for (uint8_t v : Bytes{3, 'a', 'b', 'c', 0xc0, 0}) loop.push_back(v);
  loop[at + 5] = static_cast<uint8_t>(at);
  EXPECT_EQ(why(loop), "answer 1: name longer than 255 bytes");

  EXPECT_EQ(judgeDnsReply(reply(1, 0, "www.example.test", kA, {}, false), dnsCheck()).reason,
            "garbage reply: a query, not a response")
      << "the query echoed back";

  DnsVerdict v = judgeDnsReply(short_a, dnsCheck());
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason, "garbage reply: answer 1: A record of 3 bytes");
}

TEST(DnsAnswerTest, AStrayDatagramWithAnotherIdIsIgnored) {
  const config::Check c = dnsCheck();
  EXPECT_EQ(judgeStrayDatagram(reply(8, 0, "www.example.test", kA, {}), 7, c), std::nullopt);
  Bytes junk(40, 'x');
  EXPECT_EQ(judgeStrayDatagram(junk, 7, c), std::nullopt) << "another id, whatever follows";
  auto v = judgeStrayDatagram(Bytes{'j', 'u', 'n', 'k'}, 7, c);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->reason, "garbage reply: 4 bytes, shorter than a DNS header");
}

TEST(DnsAnswerTest, AStrayDatagramWithTheProbesIdIsJudged) {
  const config::Check c = dnsCheck("A", "REFUSED");
  auto v = judgeStrayDatagram(reply(7, 0, "www.example.test", kA, {}, false), 7, c);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->reason, "garbage reply: a query, not a response");
  v = judgeStrayDatagram(reply(7, 0, "other.example.test", 28, {}), 7, c);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->reason, "garbage reply: a reply to another question (other.example.test AAAA)");

  Bytes no_question = {0, 7, 0x81, 0x85, 0, 0, 0, 0, 0, 0, 0, 0};  // REFUSED, qdcount 0
  v = judgeStrayDatagram(no_question, 7, c);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->ok) << "judged by its rcode: " << v->reason;
  EXPECT_EQ(v->reason, "REFUSED, 0 answers");

  EXPECT_EQ(judgeStrayDatagram(reply(7, 0, "WWW.Example.TEST", kA, {}, true, true), 7, c),
            std::nullopt)
      << "a truncated reply to the question: the resolver asks again over TCP";
}

}  // namespace
}  // namespace tandem::resources::health
