#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "health/checker.h"
#include "health/dns_answer.h"
#include "loop/dispatcher.h"

// The dns check: one query (check.query_name, check.query_type, class IN, recursion desired)
// sent by c-ares to the real server and nowhere else, judged by dns_answer: healthy when the
// reply's rcode is expect_rcode and, with expect_answer set, an answer record contains it.
//
// c-ares runs on the loop: each probe has a channel of its own whose only server is the real
// server (no /etc/resolv.conf, no search domains, one try), its sockets watched on the dispatcher
// (ARES_OPT_SOCK_STATE_CB) and its timeouts a dispatcher timer; c-ares is only ever called from
// a loop callback or probe(), and never waits. Its sockets are the checker's own
// (ares_set_socket_functions): opened by openProbeSocket, so they leave from source_address like
// every probe, and read by the checker, which sees each datagram c-ares would drop without a word
// (garbage, a reply that leaves out the question) and fails the probe saying so. The probe is
// bounded by check.timeout whatever c-ares does, a truncated reply's retry over TCP included.
// Where the network is touched.
struct ares_socket_functions;

namespace tandem::resources::health {

class DnsChecker final : public Checker {
 public:
  explicit DnsChecker(loop::Dispatcher& dispatcher);
  ~DnsChecker() override;
  DnsChecker(const DnsChecker&) = delete;
  DnsChecker& operator=(const DnsChecker&) = delete;

  void probe(const ProbeTarget& target, ProbeDone done) override;
  void cancel() override;

 private:
  struct Ares;  // the channel and what its callbacks report; ares.h stays out of this header

  std::optional<std::string> openChannel(const ProbeTarget& target);
  // The sockets c-ares uses, the checker's own (probe_socket.h), read by it first.
  static const ares_socket_functions& socketFunctions();
  // The query's outcome, recorded for drive() and the deadline to act on.
  static void onAnswer(void* self, int status, int timeouts, unsigned char* abuf, int alen);

  // c-ares asks for a socket to be watched for reading and/or writing, or no longer.
  void watchSocket(int fd, bool readable, bool writable);
  // Lets c-ares handle fd's events (or its timeouts, with -1), then ends the probe if that
  // settled it, else re-arms c-ares's timer.
  void drive(int read_fd, int write_fd);
  // The verdict, once c-ares or a stray datagram has settled the probe.
  std::optional<DnsVerdict> settled();
  // timedOutReason, saying how many replies to another query id were ignored.
  std::string timedOut() const;
  void armAresTimer();
  // Calls done last, touching nothing after it: done may destroy the checker.
  void finish(DnsVerdict verdict);
  void endQuery();

  loop::Dispatcher& dispatcher_;
  std::unique_ptr<Ares> ares_;
  std::unique_ptr<loop::Timer> ares_timer_;  // c-ares's next timeout
  // The probe's own bound, check.timeout; 0 ms for a result known before probe() returned.
  std::unique_ptr<loop::Timer> deadline_;
  std::map<int, std::unique_ptr<loop::FdWatch>> watches_;  // c-ares's sockets
  ProbeTarget target_;
  loop::MonoTime started_{};
  ProbeDone done_;
};

}  // namespace tandem::resources::health
