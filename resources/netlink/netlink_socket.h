#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/duration.h"
#include "common/result.h"
#include "loop/dispatcher.h"

struct mnl_socket;

// The one netlink socket of tandem's kernel shells (rtnetlink for the VIPs, generic netlink for
// IPVS): a dumb, asynchronous pipe. Requests are byte buffers the pure codecs build; replies are
// read only when the loop says the fd is readable, matched to their request by sequence number
// and port id, and handed, datagram by datagram, to that request's decoder. Each request has a
// deadline: a kernel that stays silent becomes a kTimeout completion naming what was asked, never
// a wait, and a reply that comes after it is dropped. Nothing here polls or sleeps.
namespace tandem::resources::netlink {

// Where one received datagram belongs: the sequence number and port id of its first message.
// Pure; a datagram too short for a netlink header, or whose first header claims more bytes than
// the datagram holds, is a kParse error.
struct Route {
  uint32_t seq = 0;
  uint32_t pid = 0;
};
[[nodiscard]] Result<Route> routeDatagram(std::span<const uint8_t> datagram);

// " (what)", or nothing for an empty what: a caller that describes its own failures (IPVS
// writes, 11,000 of them on a first apply) need not format a description per request.
std::string inParens(const std::string& what);

class NetlinkSocket {
 public:
  // Reads one datagram of the request's replies: true when the request is complete (its ack,
  // or the end of its dump), false when more is to come, an error to fail the request with
  // (the kernel's refusal, or a reply that does not decode).
  using Decoder = std::function<Result<bool>(std::span<const uint8_t> datagram)>;
  // Called once per request, from the loop (never from inside request()).
  using Completion = std::function<void(Result<void>)>;

  // Opens and binds a socket of the netlink protocol (NETLINK_ROUTE, NETLINK_GENERIC), with
  // extended acks and capped acks, non-blocking and close-on-exec, watched on the dispatcher.
  // name ("NETLINK_GENERIC") is for error messages.
  static Result<std::unique_ptr<NetlinkSocket>> open(loop::Dispatcher& dispatcher, int protocol,
                                                     std::string name);
  // Pending requests are dropped without their completion being called.
  ~NetlinkSocket();
  NetlinkSocket(const NetlinkSocket&) = delete;
  NetlinkSocket& operator=(const NetlinkSocket&) = delete;

  // Asks the kernel to check requests strictly (NETLINK_GET_STRICT_CHK, Linux 4.20): a dump
  // request's header and attributes then filter what it returns, and any it cannot honour are
  // refused instead of ignored. Fails (ENOPROTOOPT) on an older kernel, which ignores filters.
  [[nodiscard]] Result<void> checkStrictly();

  // The sequence number for the next request's header.
  uint32_t nextSeq() { return ++seq_; }
  uint32_t portId() const { return portid_; }

  // Sends request (whose header carries seq) now, or, for a dump while another dump runs (a
  // netlink socket runs one dump at a time), once that one ends. what says what was asked,
  // for the errors: "list the IPVS services". While the socket is corked, a request that is
  // no dump waits for the uncork instead (below).
  void request(std::vector<uint8_t> bytes, uint32_t seq, std::string what, Millis timeout,
               Decoder decoder, Completion done);

  // Between cork() and the matching uncork(), requests are gathered and then sent together,
  // in the order they were made, as few datagrams as hold them (at most kBatchMessages
  // messages and kBatchBytes each): the kernel runs the messages of one datagram in turn and
  // answers each with a datagram of its own, so a batch costs one sendmsg instead of one per
  // request and nothing else changes. Corks nest. A dump is never batched: what was gathered
  // before it is sent first. The socket corks itself while it reads replies, so that requests
  // the completions make (the next of a plan) go out together.
  void cork() { ++corked_; }
  void uncork();
  static constexpr size_t kBatchMessages = 32;
  static constexpr size_t kBatchBytes = 16384;

  // Calls done(result) from the loop soon: for a request that fails before it is sent (the
  // codec refused it), so that callers see one completion path.
  void post(Completion done, Result<void> result);

  // For a request the kernel answers inside the sender's sendmsg() (a generic netlink family
  // lookup, an rtnetlink request): sends it and reads the answer that is already queued, without
  // waiting for anything. When nothing is queued the answer is kTimeout at once. Only for a
  // synchronous step at startup; everything else goes through request().
  [[nodiscard]] Result<void> exchangeNow(const std::vector<uint8_t>& bytes, uint32_t seq,
                                         const std::string& what, const Decoder& decoder);

  size_t pending() const { return pending_.size() + waiting_.size() + outbox_.size(); }
  // Datagrams that matched no pending request (late replies to timed-out ones, strangers).
  uint64_t dropped() const { return dropped_; }
  // sendmsg() calls made, batches and lone requests alike.
  uint64_t sends() const { return sends_; }

 private:
  struct Pending {
    std::string what;
    Millis timeout{0};
    loop::MonoTime deadline;
    bool dump = false;
    Decoder decoder;
    Completion done;
  };
  struct Waiting {
    std::vector<uint8_t> bytes;
    uint32_t seq = 0;
    Pending p;
  };
  struct Gathered {
    uint32_t seq = 0;
    size_t bytes = 0;  // its length in batch_
    Pending p;
  };

  NetlinkSocket(loop::Dispatcher& dispatcher, mnl_socket* nl, std::string name);

  void send(std::vector<uint8_t> bytes, uint32_t seq, Pending p);
  void gather(const std::vector<uint8_t>& bytes, uint32_t seq, Pending p);
  // Sends what was gathered, in datagrams of at most kBatchMessages and kBatchBytes.
  void flush();
  // Marks p in flight from now (its deadline), after its bytes went out.
  void sent(uint32_t seq, Pending p);
  void onReadable();
  void onDeadline();
  void armDeadline();
  void complete(uint32_t seq, Result<void> result);
  void sendWaiting();
  void runPosted();

  loop::Dispatcher& dispatcher_;
  mnl_socket* nl_;
  std::string name_;
  uint32_t portid_;
  uint32_t seq_;
  std::unique_ptr<loop::FdWatch> watch_;
  std::unique_ptr<loop::Timer> deadline_timer_;
  loop::MonoTime armed_for_{};  // the deadline deadline_timer_ is armed for
  std::unique_ptr<loop::Timer> post_timer_;
  std::map<uint32_t, Pending> pending_;
  std::vector<Waiting> waiting_;  // dumps queued behind the running one
  int corked_ = 0;
  std::vector<Gathered> outbox_;  // requests gathered while corked, in order
  std::vector<uint8_t> batch_;    // their bytes, back to back (each is NLMSG_ALIGNed)
  uint64_t sends_ = 0;
  bool dump_running_ = false;
  std::vector<std::pair<Completion, Result<void>>> posted_;
  std::vector<uint64_t> rx_;  // the receive buffer (8-byte aligned for the netlink headers)
  uint64_t dropped_ = 0;
  // Destroyed with the socket: callbacks running when the socket is destroyed stop at once.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace tandem::resources::netlink
