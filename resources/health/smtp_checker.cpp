#include "health/smtp_checker.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <utility>

#include "health/probe_socket.h"
#include "health/reasons.h"

namespace tandem::resources::health {

namespace {

std::string codeAndText(const SmtpReply& r) {
  return std::to_string(r.code) + (r.text.empty() ? "" : ": " + quote(r.text, kReasonQuoteMax));
}

}  // namespace

SmtpChecker::SmtpChecker(loop::Dispatcher& dispatcher)
    : run_(dispatcher, [this] { onTimeout(); }) {}

SmtpChecker::~SmtpChecker() = default;

void SmtpChecker::probe(const ProbeTarget& target, ProbeDone done) {
  run_.begin(std::move(done));
  check_ = target.check;
  phase_ = Phase::kConnecting;
  reader_.emplace(kMaxLine);
  bytes_read_ = 0;
  out_.clear();
  // A line break would end the EHLO early and send the rest as a command of its own.
  if (check_.helo.find_first_of("\r\n") != std::string::npos) {
    return run_.soon(false, "helo " + quote(check_.helo, kReasonQuoteMax) + " holds a line break");
  }
  std::string reason;
  const int fd = openProbeSocket(target, SOCK_STREAM, reason);
  if (fd < 0) return run_.soon(false, std::move(reason));
  // Even a connect that completes at once is taken up from the loop: the socket is writable.
  if (!run_.watch(fd, loop::FdEvents{false, true},
                  [this](loop::FdEvents ready) { onReady(ready); })) {
    return;
  }
  const SocketAddress sa = toSocketAddress(target.address.address, target.address.port);
  if (::connect(fd, sa.get(), sa.length) != 0 && errno != EINPROGRESS) {
    return run_.soon(false, errnoReason(errno));
  }
  run_.armTimeout(check_.timeout);
}

void SmtpChecker::cancel() { run_.cancel(); }

void SmtpChecker::onReady(loop::FdEvents ready) {
  if (phase_ == Phase::kConnecting) return onConnected();
  if (ready.writable && !out_.empty() && !flush()) return;
  if (ready.readable) onReadable();
}

void SmtpChecker::onConnected() {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(run_.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) return run_.finish(false, errnoReason(err));
  phase_ = Phase::kBanner;
  run_.setInterest(loop::FdEvents{true, false});
}

void SmtpChecker::onReadable() {
  char buf[4096];
  // Reads what is there now, and never past the limit: one byte over it is enough to know.
  for (;;) {
    const size_t room = kMaxBytes + 1 - bytes_read_;
    const ssize_t n = ::recv(run_.fd(), buf, std::min(sizeof buf, room), 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      return run_.finish(false, errnoReason(errno));
    }
    if (n == 0) return run_.finish(false, closedReason());
    bytes_read_ += static_cast<size_t>(n);
    reader_->feed(std::string_view(buf, static_cast<size_t>(n)));
    if (!takeReplies()) return;
    if (bytes_read_ > kMaxBytes) {
      return run_.finish(false,
                         "more than " + std::to_string(kMaxBytes) + " bytes " + waitingFor());
    }
  }
}

bool SmtpChecker::takeReplies() {
  for (;;) {
    SmtpReplyReader::Step step = reader_->next();
    const std::string what = phase_ == Phase::kBanner ? "banner" : "EHLO reply";
    switch (step.kind) {
      case SmtpReplyReader::Kind::kIncomplete:
        return true;
      case SmtpReplyReader::Kind::kGarbage:
        run_.finish(false, "garbage " + what + " " + quote(step.detail, kReasonQuoteMax));
        return false;
      case SmtpReplyReader::Kind::kMixedCodes:
        run_.finish(false, what + " mixes reply codes: " + step.detail);
        return false;
      case SmtpReplyReader::Kind::kLineTooLong:
        run_.finish(false, "reply line longer than " + std::to_string(kMaxLine) + " bytes");
        return false;
      case SmtpReplyReader::Kind::kReply:
        break;
    }
    const SmtpReply& reply = step.reply;
    if (phase_ == Phase::kBanner) {
      if (reply.code != 220) {
        run_.finish(false, "banner " + codeAndText(reply));
        return false;
      }
      phase_ = Phase::kEhlo;
      out_ = "EHLO " + check_.helo + "\r\n";
      if (!flush()) return false;
      continue;
    }
    if (reply.code != 250) {
      run_.finish(false, "EHLO answered " + codeAndText(reply));
      return false;
    }
    // Polite, not waited for: the check is done, and the 221 would say nothing more. A QUIT
    // the socket does not take at once is left unsent.
    static constexpr std::string_view kQuit = "QUIT\r\n";
    (void)::send(run_.fd(), kQuit.data(), kQuit.size(), MSG_NOSIGNAL);
    run_.finish(true, "220 banner, EHLO 250");
    return false;
  }
}

bool SmtpChecker::flush() {
  while (!out_.empty()) {
    const ssize_t n = ::send(run_.fd(), out_.data(), out_.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      run_.finish(false, errnoReason(errno));
      return false;
    }
    out_.erase(0, static_cast<size_t>(n));
  }
  run_.setInterest(loop::FdEvents{true, !out_.empty()});
  return true;
}

std::string SmtpChecker::closedReason() const {
  const std::string what = phase_ == Phase::kBanner ? "the banner" : "the EHLO reply";
  if (!reader_->midReply()) return "connection closed before " + what;
  std::string reason = "connection closed in the middle of " + what;
  if (!reader_->unfinishedLine().empty()) {
    reason += ": got " + quote(reader_->unfinishedLine(), kReasonQuoteMax);
  }
  return reason;
}

const char* SmtpChecker::waitingFor() const {
  switch (phase_) {
    case Phase::kConnecting:
      return "connecting";
    case Phase::kBanner:
      return "waiting for the banner";
    case Phase::kEhlo:
      return "waiting for the EHLO reply";
  }
  return "";
}

void SmtpChecker::onTimeout() {
  std::string reason = timedOutReason(check_.timeout);
  if (phase_ != Phase::kConnecting) reason += std::string(" ") + waitingFor();
  run_.finish(false, std::move(reason));
}

}  // namespace tandem::resources::health
