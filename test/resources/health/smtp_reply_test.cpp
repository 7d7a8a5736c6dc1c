// The SMTP reply reader as pure code: replies in one piece and byte by byte, multi-line
// replies, CRLF and bare LF, several replies in one read, and every kind of bad input (a line
// that is not a reply line, codes that change within a reply, a line over the limit), which
// stays failed once it has failed.
#include "health/smtp_reply.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tandem::resources::health {
namespace {

using Kind = SmtpReplyReader::Kind;

// Every step the reader gives for input fed one byte at a time, kIncomplete ones left out.
std::vector<SmtpReplyReader::Step> byteByByte(SmtpReplyReader& r, const std::string& in) {
  std::vector<SmtpReplyReader::Step> out;
  for (char c : in) {
    r.feed(std::string_view(&c, 1));
    for (;;) {
      SmtpReplyReader::Step s = r.next();
      if (s.kind == Kind::kIncomplete) break;
      out.push_back(s);
      if (s.kind != Kind::kReply) return out;
    }
  }
  return out;
}

TEST(SmtpReplyReaderTest, OneLineReply) {
  SmtpReplyReader r;
  r.feed("220 mail.example.test ESMTP ready\r\n");
  SmtpReplyReader::Step s = r.next();
  ASSERT_EQ(s.kind, Kind::kReply);
  EXPECT_EQ(s.reply.code, 220);
  EXPECT_EQ(s.reply.text, "mail.example.test ESMTP ready");
  EXPECT_EQ(s.reply.lines, 1);
  EXPECT_EQ(r.next().kind, Kind::kIncomplete);
}

TEST(SmtpReplyReaderTest, MultiLineReplyEndsAtTheLineWithASpace) {
  SmtpReplyReader r;
  r.feed("250-mail.example.test\r\n250-PIPELINING\r\n250-SIZE 10240000\r\n");
  EXPECT_EQ(r.next().kind, Kind::kIncomplete) << "the reply has not ended";
  r.feed("250 8BITMIME\r\n");
  SmtpReplyReader::Step s = r.next();
  ASSERT_EQ(s.kind, Kind::kReply);
  EXPECT_EQ(s.reply.code, 250);
  EXPECT_EQ(s.reply.text, "mail.example.test");
  EXPECT_EQ(s.reply.lines, 4);
}

TEST(SmtpReplyReaderTest, ByteByByteGivesTheSameReplies) {
  SmtpReplyReader r;
  auto steps = byteByByte(r, "220-first\r\n220 second\r\n250-a\r\n250 b\r\n");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].kind, Kind::kReply);
  EXPECT_EQ(steps[0].reply.code, 220);
  EXPECT_EQ(steps[0].reply.text, "first");
  EXPECT_EQ(steps[0].reply.lines, 2);
  EXPECT_EQ(steps[1].kind, Kind::kReply);
  EXPECT_EQ(steps[1].reply.code, 250);
  EXPECT_EQ(steps[1].reply.lines, 2);
}

TEST(SmtpReplyReaderTest, ABareLfEndsALineToo) {
  SmtpReplyReader r;
  r.feed("220-one\n220 two\n");
  SmtpReplyReader::Step s = r.next();
  ASSERT_EQ(s.kind, Kind::kReply);
  EXPECT_EQ(s.reply.code, 220);
  EXPECT_EQ(s.reply.text, "one") << "no CR left in the text";
  EXPECT_EQ(s.reply.lines, 2);
}

TEST(SmtpReplyReaderTest, ACodeAloneIsALastLine) {
  SmtpReplyReader r;
  r.feed("250\r\n");
  SmtpReplyReader::Step s = r.next();
  ASSERT_EQ(s.kind, Kind::kReply);
  EXPECT_EQ(s.reply.code, 250);
  EXPECT_EQ(s.reply.text, "");
}

TEST(SmtpReplyReaderTest, TwoRepliesInOneReadComeOutOneAfterTheOther) {
  SmtpReplyReader r;
  r.feed("220 hi\r\n554 go away\r\n");
  EXPECT_EQ(r.next().reply.code, 220);
  SmtpReplyReader::Step s = r.next();
  ASSERT_EQ(s.kind, Kind::kReply);
  EXPECT_EQ(s.reply.code, 554);
  EXPECT_EQ(s.reply.text, "go away");
}

TEST(SmtpReplyReaderTest, ALineThatIsNotAReplyLineIsGarbage) {
  for (const std::string in : {"HTTP/1.1 400 Bad Request\r\n", "\r\n", "22\r\n", "220x\r\n",
                               "600 no such class\r\n", "260 second digit\r\n", "-220 x\r\n"}) {
    SmtpReplyReader r;
    r.feed(in);
    SmtpReplyReader::Step s = r.next();
    EXPECT_EQ(s.kind, Kind::kGarbage) << in;
  }
  SmtpReplyReader r;
  r.feed("SSH-2.0-OpenSSH_9.2\r\n");
  SmtpReplyReader::Step s = r.next();
  ASSERT_EQ(s.kind, Kind::kGarbage);
  EXPECT_EQ(s.detail, "SSH-2.0-OpenSSH_9.2");
}

TEST(SmtpReplyReaderTest, GarbageShowsBeforeItsLineEnds) {
  SmtpReplyReader r;
  r.feed("HELLO");  // a server that sends no LF, ever
  SmtpReplyReader::Step s = r.next();
  ASSERT_EQ(s.kind, Kind::kGarbage);
  EXPECT_EQ(s.detail, "HELLO");
  // but a reply line cut anywhere, CR included, is only incomplete
  const std::string line = "220-ok\r\n";
  for (size_t n = 1; n < line.size(); ++n) {
    SmtpReplyReader cut;
    cut.feed(line.substr(0, n));
    EXPECT_EQ(cut.next().kind, Kind::kIncomplete) << n;
  }
}

TEST(SmtpReplyReaderTest, CodesThatChangeWithinAReplyFail) {
  SmtpReplyReader r;
  auto steps = byteByByte(r, "250-first\r\n251 second\r\n");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kind, Kind::kMixedCodes);
  EXPECT_EQ(steps[0].detail, "250 then 251");
}

TEST(SmtpReplyReaderTest, ALineOverTheLimitFailsWhetherItEndsOrNot) {
  {
    SmtpReplyReader r(1000);
    r.feed("220 " + std::string(994, 'a') + "\r\n");  // 1000 bytes through the LF
    EXPECT_EQ(r.next().kind, Kind::kReply) << "at the limit: fine";
  }
  {
    SmtpReplyReader r(1000);
    r.feed("220 " + std::string(995, 'a') + "\r\n");
    EXPECT_EQ(r.next().kind, Kind::kLineTooLong);
  }
  {
    SmtpReplyReader r(1000);
    auto steps = byteByByte(r, "220 " + std::string(5000, 'a'));
    ASSERT_EQ(steps.size(), 1u) << "known before the line ends";
    EXPECT_EQ(steps[0].kind, Kind::kLineTooLong);
  }
  {
    SmtpReplyReader r(1000);
    r.feed("220 " + std::string(995, 'a'));
    EXPECT_EQ(r.next().kind, Kind::kIncomplete) << "999 bytes: its LF may still fit";
    r.feed("a");
    EXPECT_EQ(r.next().kind, Kind::kLineTooLong);
  }
}

TEST(SmtpReplyReaderTest, SaysWhenAReplyHasBegunAndNotEnded) {
  SmtpReplyReader r;
  EXPECT_FALSE(r.midReply());
  r.feed("220-one\r\n");
  EXPECT_EQ(r.next().kind, Kind::kIncomplete);
  EXPECT_TRUE(r.midReply()) << "a line of it has come";
  EXPECT_EQ(r.unfinishedLine(), "");
  r.feed("220 tw");
  EXPECT_EQ(r.next().kind, Kind::kIncomplete);
  EXPECT_EQ(r.unfinishedLine(), "220 tw");
  r.feed("o\r\n");
  EXPECT_EQ(r.next().kind, Kind::kReply);
  EXPECT_FALSE(r.midReply());
}

TEST(SmtpReplyReaderTest, AFailureIsFinal) {
  SmtpReplyReader r;
  r.feed("nonsense\r\n");
  EXPECT_EQ(r.next().kind, Kind::kGarbage);
  r.feed("220 fine now\r\n");
  EXPECT_EQ(r.next().kind, Kind::kGarbage);
}

}  // namespace
}  // namespace tandem::resources::health
