// The text checks the config loader runs on values and on the raw file (config_loader_parts.h).
#include <regex.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <vector>

#include "common/text.h"
#include "config/config_loader_parts.h"
#include "config/config_validate.h"

namespace tandem::config::loading {

// text with its control characters written as \r, \n, \t or \xNN, so that a diagnostic
// quoting it stays one line.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// HTTP's request line and headers carry no white space or control characters inside a value:
// one would end the line early or smuggle another header in.
std::optional<std::string> httpTextProblem(std::string_view text, const char* what) {
  for (unsigned char c : text) {
    if (c <= 0x20 || c == 0x7f) {
      return "\"" + printable(text) + "\" holds " +
             (c == ' ' ? std::string("a space") : "a control character") + ", which " + what +
             " in an HTTP request cannot carry";
    }
  }
  return std::nullopt;
}

// A Host header: a name or an address, optionally with :port.
std::optional<std::string> hostHeaderProblem(std::string_view host) {
  if (host.empty()) return std::string("the Host header cannot be empty");
  if (auto why = httpTextProblem(host, "a Host header")) return why;
  for (unsigned char c : host) {
    if (!std::isalnum(c) &&
        std::string_view("-._:[]").find(static_cast<char>(c)) == std::string_view::npos) {
      return "\"" + printable(host) + "\" is not a host name or address (it holds '" +
             printable(std::string_view(reinterpret_cast<const char*>(&c), 1)) + "')";
    }
  }
  return std::nullopt;
}

// A domain name as DNS carries it: labels of 1 to 63 letters, digits, hyphens or underscores
// (SRV's _service), 253 characters at most, one trailing dot allowed.
std::optional<std::string> dnsNameProblem(std::string_view name) {
  std::string_view n = name;
  if (!n.empty() && n.back() == '.') n.remove_suffix(1);
  if (n.empty()) return std::string("the root alone is not a name to query");
  if (n.size() > 253) {
    return "\"" + printable(name) + "\" is longer than a domain name's 253 characters";
  }
  size_t start = 0;
  while (start <= n.size()) {
    size_t dot = n.find('.', start);
    if (dot == std::string_view::npos) dot = n.size();
    std::string_view label = n.substr(start, dot - start);
    if (label.empty()) return "\"" + printable(name) + "\" has an empty label (two dots)";
    if (label.size() > 63) {
      return "\"" + printable(name) + "\" has a label longer than 63 characters";
    }
    for (unsigned char c : label) {
      if (!std::isalnum(c) && c != '-' && c != '_') {
        return "\"" + printable(name) + "\" is not a domain name (it holds '" +
               printable(std::string_view(reinterpret_cast<const char*>(&c), 1)) + "')";
      }
    }
    start = dot + 1;
  }
  return std::nullopt;
}

const std::vector<std::string> kSchedulers = {"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh",
                                              "sh", "sed", "nq", "mh",  "fo",   "ovf",   "twos"};
const std::vector<std::string> kDnsTypes = {"A",   "AAAA", "CNAME", "MX", "NS",
                                            "PTR", "SOA",  "SRV",   "TXT"};
const std::vector<std::string> kDnsRcodes = {"NOERROR",  "FORMERR", "SERVFAIL",
                                             "NXDOMAIN", "NOTIMP",  "REFUSED"};
const std::vector<std::string> kLogLevels = {"error", "warning", "notice", "info", "debug"};

// Why a POSIX extended regular expression does not compile; nullopt when it does. The checker
// compiles it the same way (regcomp, REG_EXTENDED | REG_NOSUB).
std::optional<std::string> regexError(const std::string& pattern) {
  regex_t re;
  int rc = regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc == 0) {
    regfree(&re);
    return std::nullopt;
  }
  char buf[256];
  regerror(rc, &re, buf, sizeof buf);
  return std::string(buf);
}

// Which check types each type-specific option belongs to.
const std::map<std::string, std::vector<CheckType>>& checkOptionOwners() {
  static const std::map<std::string, std::vector<CheckType>> owners = {
      {"method", {CheckType::kHttp, CheckType::kHttps}},
      {"path", {CheckType::kHttp, CheckType::kHttps}},
      {"host", {CheckType::kHttp, CheckType::kHttps}},
      {"expect_status", {CheckType::kHttp, CheckType::kHttps}},
      {"expect_body", {CheckType::kHttp, CheckType::kHttps}},
      {"max_response", {CheckType::kHttp, CheckType::kHttps}},
      {"tls_verify", {CheckType::kHttps}},
      {"ca_file", {CheckType::kHttps}},
      {"payload", {CheckType::kUdp}},
      {"expect_reply", {CheckType::kUdp}},
      {"query_name", {CheckType::kDns}},
      {"query_type", {CheckType::kDns}},
      {"expect_rcode", {CheckType::kDns}},
      {"helo", {CheckType::kSmtp}},
      {"command", {CheckType::kExec}},
      {"tcp_reset", {CheckType::kTcp}},
      {"expect_body_regex", {CheckType::kHttp, CheckType::kHttps}},
      {"accept_silence", {CheckType::kUdp}},
      {"expect_answer", {CheckType::kDns}},
      {"exit_weight", {CheckType::kExec}},
      {"source_address",
       {CheckType::kTcp, CheckType::kHttp, CheckType::kHttps, CheckType::kUdp, CheckType::kDns,
        CheckType::kSmtp}},
  };
  return owners;
}

std::optional<Unclosed> unclosedOpening(std::string_view text) {
  int line = 1, col = 0;
  bool value = false;          // after '=' on this line, or inside [ ] or { }
  std::vector<Unclosed> open;  // the brackets in value position not yet closed
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    ++col;
    if (ch == '\n') {
      ++line;
      col = 0;
      if (open.empty()) value = false;
      continue;
    }
    if (ch == '#') {  // a comment runs to the end of the line
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i, ++col;
      continue;
    }
    if (ch == '"' || ch == '\'') {
      const int at_line = line, at_col = col;
      if (text.substr(i, 3) == std::string(3, ch)) {  // multi-line: runs to the same triple
        const size_t end = text.find(std::string(3, ch), i + 3);
        if (end == std::string_view::npos) {
          return Unclosed{at_line, at_col, "multi-line string", ch};
        }
        for (size_t k = i; k < end + 2; ++k) {
          ++col;
          if (text[k] == '\n') ++line, col = 0;
        }
        i = end + 2;
        continue;
      }
      size_t k = i + 1;
      for (; k < text.size() && text[k] != ch && text[k] != '\n'; ++k) {
        if (ch == '"' && text[k] == '\\' && k + 1 < text.size() && text[k + 1] != '\n') ++k;
      }
      if (k >= text.size() || text[k] == '\n') return Unclosed{at_line, at_col, "string", ch};
      col += static_cast<int>(k - i);
      i = k;
      continue;
    }
    if (ch == '=') {
      value = true;
    } else if (value && (ch == '[' || ch == '{')) {
      open.push_back(
          Unclosed{line, col, ch == '[' ? "array" : "inline table", ch == '[' ? ']' : '}'});
    } else if (!open.empty() && ch == open.back().closer) {
      open.pop_back();
    }
  }
  if (!open.empty()) return open.front();
  return std::nullopt;
}

std::optional<std::pair<int, int>> tooManyDots(std::string_view text) {
  int line = 1, col = 0, dots = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    ++col;
    if (ch == '\n') {
      ++line;
      col = 0;
      dots = 0;
      if (quote == '\'' || quote == '"') quote = 0;  // single-line strings end with the line
      continue;
    }
    if (quote) {
      if (ch == '\\' && quote == '"')
        ++i, ++col;
      else if (ch == quote)
        quote = 0;
      continue;
    }
    if (ch == '"' || ch == '\'')
      quote = ch;
    else if (ch == '#')
      quote = '\n';  // a comment runs to the end of the line
    else if (ch == '.' && ++dots > kMaxDottedParts)
      return std::make_pair(line, col);
  }
  return std::nullopt;
}

}  // namespace tandem::config::loading
