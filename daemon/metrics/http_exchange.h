#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "metrics/exposition.h"

// One HTTP/1.x exchange of the metrics endpoint, as pure functions: the request parsed from the
// bytes read so far, and the response to it. The endpoint answers one request per connection
// and closes it (Connection: close): a scraper reconnects every scrape interval, and nothing is
// kept between scrapes. Nothing here reads a socket.
namespace tandem::metrics {

// A request larger than this is refused (431) unread: a scrape's request is a few hundred bytes.
inline constexpr size_t kMaxRequestBytes = 8192;

struct HttpRequest {
  std::string method;
  std::string target;  // the path, query included
  // The Accept header names OpenMetrics: Prometheus sends it when it can read the format.
  bool wants_openmetrics = false;
};

struct ParsedRequest {
  enum class Status { kIncomplete, kComplete, kBad };
  Status status = Status::kIncomplete;
  HttpRequest request;  // kComplete
  int http_status = 0;  // kBad: 400, 431, 505
  std::string why;      // kBad: for the log and the body
};

// The request in the bytes received so far: incomplete until the blank line that ends the
// header, bad when it cannot be HTTP/1.x or is too large. A body is not read (GET has none).
ParsedRequest parseRequest(std::string_view received);

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
  std::string allow;  // 405: the methods allowed
  bool head = false;  // HEAD: the header of a GET, without its body
};

// What to answer: /metrics is the scrape (scrape(format) renders it, only then), / names it,
// the rest is 404; methods other than GET and HEAD are 405.
using Scrape = std::function<std::string(Format format)>;
HttpResponse respond(const HttpRequest& request, const Scrape& scrape);
HttpResponse badRequest(const ParsedRequest& parsed);

// The status line and header, Content-Length and Connection: close included.
std::string responseHead(const HttpResponse& response);

}  // namespace tandem::metrics
