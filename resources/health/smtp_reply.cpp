#include "health/smtp_reply.h"

#include <utility>

namespace tandem::resources::health {

namespace {

// Whether line, or as much of it as has come, can start a reply line: RFC 5321's Reply-code
// (%x32-35 %x30-35 %x30-39), then the end, a space or a hyphen.
bool startsLikeAReplyLine(std::string_view line) {
  static constexpr char kLow[] = "200";
  static constexpr char kHigh[] = "559";
  for (size_t i = 0; i < line.size() && i < 3; ++i) {
    if (line[i] < kLow[i] || line[i] > kHigh[i]) return false;
  }
  return line.size() <= 3 || line[3] == ' ' || line[3] == '-';
}

}  // namespace

SmtpReplyReader::Step SmtpReplyReader::fail(Kind kind, std::string detail) {
  failed_ = true;
  failure_.kind = kind;
  failure_.detail = std::move(detail);
  pending_.clear();
  return failure_;
}

SmtpReplyReader::Step SmtpReplyReader::next() {
  if (failed_) return failure_;
  size_t start = 0;
  for (;;) {
    const size_t lf = pending_.find('\n', start);
    if (lf == std::string::npos) {
      // With its LF still to come, a line this long is already over the limit.
      const std::string_view rest(pending_.data() + start, pending_.size() - start);
      if (rest.size() >= max_line_) return fail(Kind::kLineTooLong, "");
      // Garbage shows before its line ends: a server that is not SMTP need not send a LF.
      std::string_view head = rest;
      if (head.size() == 4 && head.back() == '\r') head.remove_suffix(1);  // its LF to come
      if (!startsLikeAReplyLine(head)) return fail(Kind::kGarbage, std::string(rest));
      pending_.erase(0, start);
      return Step{};
    }
    if (lf + 1 - start > max_line_) return fail(Kind::kLineTooLong, "");
    std::string_view line(pending_.data() + start, lf - start);
    start = lf + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() < 3 || !startsLikeAReplyLine(line)) {
      return fail(Kind::kGarbage, std::string(line));
    }
    const int code = (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
    if (partial_.lines > 0 && code != partial_.code) {
      return fail(Kind::kMixedCodes,
                  std::to_string(partial_.code) + " then " + std::to_string(code));
    }
    if (partial_.lines == 0) {
      partial_.code = code;
      partial_.text = line.size() > 4 ? std::string(line.substr(4)) : std::string();
    }
    ++partial_.lines;
    if (line.size() > 3 && line[3] == '-') continue;
    Step done;
    done.kind = Kind::kReply;
    done.reply = std::move(partial_);
    partial_ = SmtpReply{};
    pending_.erase(0, start);
    return done;
  }
}

}  // namespace tandem::resources::health
