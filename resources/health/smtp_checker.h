#pragma once

#include <optional>
#include <string>

#include "health/checker.h"
#include "health/probe_run.h"
#include "health/smtp_reply.h"
#include "loop/dispatcher.h"

// The smtp check: a TCP connection to the real server, its greeting, an EHLO and a QUIT.
// Healthy when the greeting is a 220 and the EHLO is answered 250; the QUIT is sent and the
// connection closed without waiting for the 221. The whole exchange is bounded by the timeout
// (one timer) and by the bytes read (16 KiB, a line at most 1000), so a server that talks
// forever or not at all fails like one that says no. Replies are parsed by SmtpReplyReader.
// Where the network is touched.
namespace tandem::resources::health {

class SmtpChecker final : public Checker {
 public:
  explicit SmtpChecker(loop::Dispatcher& dispatcher);
  ~SmtpChecker() override;
  SmtpChecker(const SmtpChecker&) = delete;
  SmtpChecker& operator=(const SmtpChecker&) = delete;

  void probe(const ProbeTarget& target, ProbeDone done) override;
  void cancel() override;

  // Bytes read from one server at most, over the whole exchange.
  static constexpr size_t kMaxBytes = 16384;
  static constexpr size_t kMaxLine = 1000;

 private:
  enum class Phase { kConnecting, kBanner, kEhlo };

  void onReady(loop::FdEvents ready);
  void onConnected();
  void onReadable();
  // Acts on each complete reply in what was read; false once the probe is over.
  bool takeReplies();
  // Writes what the socket takes of out_ now; false once the probe is over.
  bool flush();
  void onTimeout();
  const char* waitingFor() const;
  std::string closedReason() const;

  ProbeRun run_;
  Phase phase_ = Phase::kConnecting;
  config::Check check_;
  std::optional<SmtpReplyReader> reader_;
  size_t bytes_read_ = 0;
  std::string out_;  // written to the server, not yet taken by the socket
};

}  // namespace tandem::resources::health
