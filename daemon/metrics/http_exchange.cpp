#include "metrics/http_exchange.h"

#include <algorithm>
#include <cctype>

namespace tandem::metrics {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

ParsedRequest bad(int status, std::string why) {
  ParsedRequest p;
  p.status = ParsedRequest::Status::kBad;
  p.http_status = status;
  p.why = std::move(why);
  return p;
}

// A token of RFC 9110: the method.
bool isToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) ||
           std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
  });
}

std::string_view reasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
  }
  return "Error";
}

}  // namespace

ParsedRequest parseRequest(std::string_view received) {
  // Tolerate bare LF line ends (RFC 9112 allows a recipient to), so look for either ending.
  size_t end = received.find("\r\n\r\n");
  size_t end_lf = received.find("\n\n");
  if (end == std::string_view::npos && end_lf == std::string_view::npos) {
    if (received.size() >= kMaxRequestBytes) {
      return bad(431, "the request header is over " + std::to_string(kMaxRequestBytes) + " bytes");
    }
    return {};
  }
  const size_t header_end = std::min(end, end_lf);
  if (header_end >= kMaxRequestBytes) {
    return bad(431, "the request header is over " + std::to_string(kMaxRequestBytes) + " bytes");
  }
  std::string_view head = received.substr(0, header_end);
  auto nextLine = [&head]() {
    size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head = nl == std::string_view::npos ? std::string_view() : head.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };
  std::string_view line = nextLine();
  // request-line = method SP request-target SP HTTP-version
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return bad(400, "the request line is not \"METHOD TARGET HTTP/1.x\"");
  }
  ParsedRequest p;
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!isToken(method)) return bad(400, "the method is not a token");
  if (target.empty() || target.front() != '/') {
    return bad(400, "the request target is not an absolute path");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    if (version.substr(0, 5) == "HTTP/") return bad(505, "only HTTP/1.0 and HTTP/1.1 are spoken");
    return bad(400, "the request line is not \"METHOD TARGET HTTP/1.x\"");
  }
  p.request.method = std::string(method);
  p.request.target = std::string(target);
  while (!head.empty()) {
    line = nextLine();
    if (line.empty()) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 || !isToken(line.substr(0, colon))) {
      return bad(400, "a header line is not \"Name: value\"");
    }
    const std::string name = lower(line.substr(0, colon));
    if (name == "content-length") {
      // 1*DIGIT (RFC 9110 8.6): a sign, a letter or nothing is a malformed message, and a
      // server must not guess its length.
      const std::string_view value = trim(line.substr(colon + 1));
      if (value.empty() || value.size() > 18 ||
          !std::all_of(value.begin(), value.end(),
                       [](unsigned char c) { return std::isdigit(c) != 0; })) {
        return bad(400, "Content-Length \"" + std::string(value.substr(0, 32)) +
                            "\" is not a number of bytes");
      }
    }
    if (name == "accept" &&
        lower(trim(line.substr(colon + 1))).find("application/openmetrics-text") !=
            std::string::npos) {
      p.request.wants_openmetrics = true;
    }
  }
  p.status = ParsedRequest::Status::kComplete;
  return p;
}

HttpResponse respond(const HttpRequest& request, const Scrape& scrape) {
  HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  if (request.method != "GET" && request.method != "HEAD") {
    r.status = 405;
    r.allow = "GET, HEAD";
    r.body = "only GET and HEAD\n";
    return r;
  }
  r.head = request.method == "HEAD";
  std::string_view path = request.target;
  path = path.substr(0, path.find('?'));
  if (path == "/metrics") {
    const Format format =
        request.wants_openmetrics ? Format::kOpenMetrics : Format::kPrometheusText;
    r.content_type = std::string(contentType(format));
    r.body = scrape(format);
    return r;
  }
  if (path == "/") {
    r.body = "tandemd: the metrics are at /metrics\n";
    return r;
  }
  r.status = 404;
  r.body = "not found: the metrics are at /metrics\n";
  return r;
}

HttpResponse badRequest(const ParsedRequest& parsed) {
  HttpResponse r;
  r.status = parsed.http_status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = parsed.why + "\n";
  return r;
}

std::string responseHead(const HttpResponse& response) {
  std::string h = "HTTP/1.1 " + std::to_string(response.status) + " " +
                  std::string(reasonPhrase(response.status)) + "\r\n";
  h += "Content-Type: " + response.content_type + "\r\n";
  h += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  if (!response.allow.empty()) h += "Allow: " + response.allow + "\r\n";
  h += "Connection: close\r\n\r\n";
  return h;
}

}  // namespace tandem::metrics
