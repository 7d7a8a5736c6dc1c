#include "metrics/http_exchange.h"

#include <gtest/gtest.h>

namespace tandem::metrics {
namespace {

using Status = ParsedRequest::Status;

std::string scrapeOf(Format f) {
  return f == Format::kOpenMetrics ? "openmetrics\n# EOF\n" : "text\n";
}

TEST(HttpExchange, WaitsForTheBlankLineThatEndsTheHeader) {
  EXPECT_EQ(parseRequest("GET /metrics HTTP/1.1\r\nHost: x\r\n").status, Status::kIncomplete);
  EXPECT_EQ(parseRequest("").status, Status::kIncomplete);
  EXPECT_EQ(parseRequest("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").status, Status::kComplete);
  EXPECT_EQ(parseRequest("GET /metrics HTTP/1.0\n\n").status, Status::kComplete);
}

TEST(HttpExchange, PrometheusAcceptHeaderAsksForOpenMetrics) {
  auto p = parseRequest(
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9474\r\nUser-Agent: Prometheus/2.42.0\r\n"
      "Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
      "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n\r\n");
  ASSERT_EQ(p.status, Status::kComplete);
  EXPECT_TRUE(p.request.wants_openmetrics);
  HttpResponse r = respond(p.request, scrapeOf);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, contentType(Format::kOpenMetrics));
  EXPECT_EQ(r.body, "openmetrics\n# EOF\n");
}

TEST(HttpExchange, CurlGetsTheTextFormat) {
  auto p = parseRequest("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
  ASSERT_EQ(p.status, Status::kComplete);
  EXPECT_FALSE(p.request.wants_openmetrics);
  HttpResponse r = respond(p.request, scrapeOf);
  EXPECT_EQ(r.content_type, contentType(Format::kPrometheusText));
  EXPECT_EQ(r.body, "text\n");
}

TEST(HttpExchange, HeaderNamesAreCaseInsensitive) {
  auto p = parseRequest("GET /metrics HTTP/1.1\r\naCCePT: application/OpenMetrics-Text\r\n\r\n");
  ASSERT_EQ(p.status, Status::kComplete);
  EXPECT_TRUE(p.request.wants_openmetrics);
}

TEST(HttpExchange, OnlyMetricsIsScrapedAndOnlyThen) {
  int scrapes = 0;
  auto counting = [&scrapes](Format) {
    ++scrapes;
    return std::string("x");
  };
  auto get = [](const std::string& target) {
    return parseRequest("GET " + target + " HTTP/1.1\r\n\r\n").request;
  };
  EXPECT_EQ(respond(get("/"), counting).status, 200);
  EXPECT_EQ(respond(get("/favicon.ico"), counting).status, 404);
  EXPECT_EQ(respond(get("/metricsx"), counting).status, 404);
  EXPECT_EQ(scrapes, 0);
  EXPECT_EQ(respond(get("/metrics?x=1"), counting).status, 200);
  EXPECT_EQ(scrapes, 1);
}

TEST(HttpExchange, OtherMethodsAreRefusedWithAllow) {
  auto p = parseRequest("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(p.status, Status::kComplete);
  HttpResponse r = respond(p.request, scrapeOf);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.allow, "GET, HEAD");
  EXPECT_NE(responseHead(r).find("Allow: GET, HEAD\r\n"), std::string::npos);
}

TEST(HttpExchange, HeadHasTheLengthOfTheBodyItOmits) {
  auto p = parseRequest("HEAD /metrics HTTP/1.1\r\n\r\n");
  HttpResponse r = respond(p.request, scrapeOf);
  EXPECT_TRUE(r.head);
  EXPECT_NE(responseHead(r).find("Content-Length: 5\r\n"), std::string::npos);
}

TEST(HttpExchange, GarbageGetsAClearRefusal) {
  struct Case {
    const char* text;
    int status;
    const char* why;
  } cases[] = {
      {"\x16\x03\x01\x02\x01\xfc\x03\x03\r\n\r\n", 400, "request line"},
      {"GET\r\n\r\n", 400, "request line"},
      {"GET /metrics\r\n\r\n", 400, "request line"},
      {"GET metrics HTTP/1.1\r\n\r\n", 400, "absolute path"},
      {"GET /metrics HTTP/2.0\r\n\r\n", 505, "HTTP/1.0 and HTTP/1.1"},
      {"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", 400, "Name: value"},
      {"G(T /metrics HTTP/1.1\r\n\r\n", 400, "token"},
      {"GET /metrics HTTP/1.1\r\nContent-Length: -5\r\n\r\n", 400, "Content-Length \"-5\""},
      {"GET /metrics HTTP/1.1\r\ncontent-length: abc\r\n\r\n", 400, "not a number of bytes"},
      {"GET /metrics HTTP/1.1\r\nContent-Length:\r\n\r\n", 400, "Content-Length \"\""},
  };
  for (const Case& c : cases) {
    auto p = parseRequest(c.text);
    ASSERT_EQ(p.status, Status::kBad) << c.text;
    EXPECT_EQ(p.http_status, c.status) << c.text;
    EXPECT_NE(p.why.find(c.why), std::string::npos) << p.why;
    HttpResponse r = badRequest(p);
    EXPECT_EQ(r.status, c.status);
    EXPECT_EQ(r.body, p.why + "\n");
  }
}

TEST(HttpExchange, AContentLengthOfDigitsIsAccepted) {
  auto p = parseRequest("GET /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(p.status, Status::kComplete) << p.why;
}

TEST(HttpExchange, AnOversizedHeaderIsRefusedWithoutItsEnd) {
  std::string big = "GET /metrics HTTP/1.1\r\nX: " + std::string(kMaxRequestBytes, 'a');
  auto p = parseRequest(big);
  EXPECT_EQ(p.status, Status::kBad);
  EXPECT_EQ(p.http_status, 431);
  EXPECT_EQ(parseRequest(big + "\r\n\r\n").http_status, 431);
}

TEST(HttpExchange, ResponseHeadClosesTheConnection) {
  HttpResponse r;
  r.status = 404;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "nope\n";
  EXPECT_EQ(responseHead(r),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 5\r\nConnection: close\r\n\r\n");
}

}  // namespace
}  // namespace tandem::metrics
