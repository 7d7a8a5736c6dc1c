#pragma once

#include <cstddef>
#include <string>
#include <string_view>

// SMTP replies (RFC 5321 4.2) out of the bytes a server sends, as pure code: bytes go in as they
// arrive, in any pieces, and complete replies come out. A reply is one or more lines
// "ddd-text" ending with "ddd text" (or a bare "ddd"), every line with the same code. Lines end
// in CRLF; a bare LF is taken too, since servers that send one are otherwise fine to talk to.
// Anything else is an error the checker reports: a line that is not a reply line, a reply
// whose lines disagree on the code, a line longer than the limit.
namespace tandem::resources::health {

struct SmtpReply {
  int code = 0;
  std::string text;  // the first line's text, after "ddd-" or "ddd "
  int lines = 0;
};

class SmtpReplyReader {
 public:
  enum class Kind {
    kIncomplete,  // no complete reply yet: feed more
    kReply,
    kGarbage,     // a line that is not "ddd[ -]text": detail holds it
    kMixedCodes,  // detail: "250 then 251"
    kLineTooLong,
  };
  struct Step {
    Kind kind = Kind::kIncomplete;
    SmtpReply reply;     // for kReply
    std::string detail;  // for the errors
  };

  // max_line: the longest line allowed, counted through its LF (RFC 5321 allows 512 for a
  // reply line, 1000 for any text line; real servers stay well under either).
  explicit SmtpReplyReader(size_t max_line = 1000) : max_line_(max_line) {}

  // Adds bytes from the server.
  void feed(std::string_view bytes) { pending_.append(bytes); }
  // The next complete reply in what was fed, or why there is none. An error is final: every
  // later call returns it again. Bytes after a reply stay for the next call.
  Step next();

  size_t maxLine() const { return max_line_; }
  // Whether a reply has begun and not ended: a line of it has come, or part of one.
  bool midReply() const { return partial_.lines > 0 || !pending_.empty(); }
  // The part of a line that has come without its line end.
  std::string_view unfinishedLine() const { return pending_; }

 private:
  Step fail(Kind kind, std::string detail);

  size_t max_line_;
  std::string pending_;  // bytes not yet taken into a reply
  SmtpReply partial_;    // the lines so far of a reply not yet ended
  bool failed_ = false;
  Step failure_;
};

}  // namespace tandem::resources::health
