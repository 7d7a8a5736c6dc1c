#include "ipvs/ipvs_netlink.h"

#include <linux/netlink.h>

#include <algorithm>

namespace tandem::resources::ipvs {
namespace {

constexpr int kDumpAttempts = 3;

}  // namespace

struct NetlinkKernel::DumpJob {
  KernelDone<Table> done;
  int attempt = 1;
  Table table;
  size_t next = 0;  // the service whose destinations are read next
};

Result<std::unique_ptr<NetlinkKernel>> NetlinkKernel::open(loop::Dispatcher& dispatcher,
                                                           Millis timeout) {
  auto socket = netlink::NetlinkSocket::open(dispatcher, NETLINK_GENERIC, "NETLINK_GENERIC");
  if (!socket) return fail(socket.error());
  std::unique_ptr<NetlinkKernel> k(new NetlinkKernel(std::move(*socket), timeout));
  const uint32_t seq = k->socket_->nextSeq();
  const std::string what = "look up the IPVS netlink family";
  auto out = std::make_shared<Messages>();
  auto r = k->socket_->exchangeNow(codec::encodeGetFamily(seq), seq, what,
                                   k->decoder(seq, what, std::nullopt, out));
  if (!r) {
    if (r.error().code == ErrorCode::kNotFound) {
      return fail(ErrorCode::kUnavailable,
                  "this kernel has no IPVS (generic netlink family \"IPVS\" not found); load "
                  "it with `modprobe ip_vs`");
    }
    return fail(r.error());
  }
  for (const auto& m : *out) {
    if (m.kind == codec::Message::Kind::kFamily) k->family_id_ = m.family_id;
  }
  if (k->family_id_ == 0) {
    return fail(ErrorCode::kParse, "the kernel answered the IPVS family lookup without an id");
  }
  return k;
}

NetlinkKernel::NetlinkKernel(std::unique_ptr<netlink::NetlinkSocket> socket, Millis timeout)
    : socket_(std::move(socket)), timeout_(timeout) {}

netlink::NetlinkSocket::Decoder NetlinkKernel::decoder(uint32_t seq, std::string what,
                                                       std::optional<Op> op,
                                                       std::shared_ptr<Messages> out) const {
  return [family_id = family_id_, portid = socket_->portId(), seq, what = std::move(what),
          op = std::move(op),
          out = std::move(out)](std::span<const uint8_t> datagram) -> Result<bool> {
    auto msgs = codec::decode(datagram, family_id);
    if (!msgs) {
      return fail(
          ErrorCode::kParse,
          "bad reply from the kernel" +
              netlink::inParens(what.empty() && op ? "cannot " + codec::describe(*op) : what) +
              ": " + msgs.error().message);
    }
    for (auto& m : *msgs) {
      if (m.seq != seq || (m.pid != 0 && m.pid != portid)) continue;
      const bool last =
          m.kind == codec::Message::Kind::kAck || m.kind == codec::Message::Kind::kDone;
      if (last && m.error != 0) {
        return fail(op ? codec::opError(*op, m.error, m.kernel_message)
                       : codec::ackError(m.error, what, m.kernel_message));
      }
      out->push_back(std::move(m));
      if (last) return true;
    }
    return false;
  };
}

void NetlinkKernel::transact(std::vector<uint8_t> request, uint32_t seq, std::string what,
                             std::optional<Op> op, KernelDone<Messages> done) {
  auto out = std::make_shared<Messages>();
  auto dec = decoder(seq, what, std::move(op), out);
  socket_->request(std::move(request), seq, std::move(what), timeout_, std::move(dec),
                   [out, done = std::move(done)](Result<void> r) {
                     if (!r) {
                       done(fail(r.error()));
                       return;
                     }
                     done(std::move(*out));
                   });
}

void NetlinkKernel::dump(KernelDone<Table> done) {
  auto job = std::make_shared<DumpJob>();
  job->done = std::move(done);
  dumpServices(std::move(job));
}

void NetlinkKernel::dumpServices(std::shared_ptr<DumpJob> job) {
  const uint32_t seq = socket_->nextSeq();
  transact(codec::encodeDumpServices(family_id_, seq), seq, "list the IPVS services", std::nullopt,
           [this, job](Result<Messages> replies) {
             if (!replies) {
               job->done(fail(replies.error()));
               return;
             }
             job->table = Table{};
             job->next = 0;
             bool interrupted = false;
             for (auto& m : *replies) {
               interrupted = interrupted || m.dump_interrupted;
               if (m.kind == codec::Message::Kind::kService) {
                 job->table.services.push_back(std::move(m.service));
               }
             }
             if (interrupted) {
               // The table changed under the dump: what it returned may be inconsistent.
               if (job->attempt++ == kDumpAttempts) {
                 job->done(fail(ErrorCode::kTryAgain,
                                "cannot list the IPVS services: the table kept changing"));
                 return;
               }
               dumpServices(job);
               return;
             }
             std::sort(job->table.services.begin(), job->table.services.end(),
                       [](const ServiceState& a, const ServiceState& b) {
                         return a.service.key < b.service.key;
                       });
             dumpNextDests(job);
           });
}

void NetlinkKernel::dumpNextDests(std::shared_ptr<DumpJob> job) {
  if (job->next == job->table.services.size()) {
    job->done(std::move(job->table));
    return;
  }
  const ServiceKey key = job->table.services[job->next].service.key;
  const std::string what = "list the destinations of service " + key.toString();
  const uint32_t seq = socket_->nextSeq();
  auto req = codec::encodeDumpDests(family_id_, key, seq);
  if (!req) {
    Error e{req.error().code, what + ": " + req.error().message};
    socket_->post([job, e](Result<void>) { job->done(fail(e)); }, {});
    return;
  }
  transact(std::move(*req), seq, what, std::nullopt, [this, job, what](Result<Messages> replies) {
    bool interrupted = false;
    if (!replies) {
      // The service went away between the two dumps: the whole table is stale.
      if (replies.error().code != ErrorCode::kNotFound) {
        job->done(fail(replies.error()));
        return;
      }
      interrupted = true;
    } else {
      auto& dests = job->table.services[job->next].destinations;
      for (auto& m : *replies) {
        interrupted = interrupted || m.dump_interrupted;
        if (m.kind == codec::Message::Kind::kDest) dests.push_back(std::move(m.dest));
      }
      std::sort(dests.begin(), dests.end(),
                [](const DestinationState& a, const DestinationState& b) {
                  return a.dest.key < b.dest.key;
                });
    }
    if (interrupted) {
      if (job->attempt++ == kDumpAttempts) {
        job->done(
            fail(ErrorCode::kTryAgain, "cannot list the IPVS services: the table kept changing"));
        return;
      }
      dumpServices(job);
      return;
    }
    ++job->next;
    dumpNextDests(job);
  });
}

void NetlinkKernel::apply(const Op& op, KernelDone<void> done) {
  const uint32_t seq = socket_->nextSeq();
  auto req = codec::encodeOp(family_id_, op, seq);
  if (!req) {
    // The codec's error names the service or destination already.
    socket_->post(std::move(done),
                  fail(req.error().code, "cannot change IPVS: " + req.error().message));
    return;
  }
  // Described only when it fails: a first apply sends 11,000 of these, and formatting each one's
  // description costs more than the request under the VM's emulation.
  transact(std::move(*req), seq, std::string(), op,
           [this, op, done = std::move(done)](Result<Messages> replies) {
             if (!replies) {
               Error e = replies.error();
               const std::string what = "cannot " + codec::describe(op);
               if (e.message.rfind(what, 0) != 0) e.message = what + ": " + e.message;
               done(fail(std::move(e)));
               return;
             }
             ++writes_;  // a write is a request that changed the kernel: a refused one did not
             done({});
           });
}

void NetlinkKernel::timeouts(KernelDone<Timeouts> done) {
  const uint32_t seq = socket_->nextSeq();
  transact(codec::encodeGetConfig(family_id_, seq), seq, "read the IPVS timeouts", std::nullopt,
           [done = std::move(done)](Result<Messages> replies) {
             if (!replies) {
               done(fail(replies.error()));
               return;
             }
             for (const auto& m : *replies) {
               if (m.kind == codec::Message::Kind::kConfig) {
                 done(m.timeouts);
                 return;
               }
             }
             done(fail(ErrorCode::kParse, "the kernel answered without the IPVS timeouts"));
           });
}

void NetlinkKernel::setTimeouts(const Timeouts& t, KernelDone<void> done) {
  const uint32_t seq = socket_->nextSeq();
  transact(codec::encodeSetConfig(family_id_, t, seq), seq,
           "cannot set the IPVS timeouts (tcp " + std::to_string(t.tcp) + " s, tcpfin " +
               std::to_string(t.tcpfin) + " s, udp " + std::to_string(t.udp) + " s)",
           std::nullopt, [this, done = std::move(done)](Result<Messages> replies) {
             if (!replies) {
               done(fail(replies.error()));
               return;
             }
             ++writes_;
             done({});
           });
}

void NetlinkKernel::daemons(KernelDone<std::vector<SyncDaemon>> done) {
  const uint32_t seq = socket_->nextSeq();
  transact(codec::encodeDumpDaemons(family_id_, seq), seq, "list the IPVS sync daemons",
           std::nullopt, [done = std::move(done)](Result<Messages> replies) {
             if (!replies) {
               done(fail(replies.error()));
               return;
             }
             std::vector<SyncDaemon> out;
             for (auto& m : *replies) {
               if (m.kind == codec::Message::Kind::kDaemon) out.push_back(std::move(m.daemon));
             }
             done(std::move(out));
           });
}

void NetlinkKernel::startDaemon(const SyncDaemon& d, KernelDone<void> done) {
  const uint32_t seq = socket_->nextSeq();
  auto req = codec::encodeStartDaemon(family_id_, d, seq);
  if (!req) {
    socket_->post(std::move(done), fail(req.error()));  // names the daemon already
    return;
  }
  // EEXIST: the kernel runs one daemon per state, whatever its settings.
  daemonRequest(std::move(*req), seq, "cannot " + codec::describeStart(d),
                ErrorCode::kAlreadyExists,
                "a sync " + syncStateName(d.state) + " daemon already runs", std::move(done));
}

void NetlinkKernel::stopDaemon(SyncState state, KernelDone<void> done) {
  const uint32_t seq = socket_->nextSeq();
  daemonRequest(codec::encodeStopDaemon(family_id_, state, seq), seq,
                "cannot " + codec::describeStop(state), ErrorCode::kNotFound,
                "no sync " + syncStateName(state) + " daemon runs", std::move(done));
}

void NetlinkKernel::daemonRequest(std::vector<uint8_t> request, uint32_t seq, std::string what,
                                  ErrorCode code, std::string meaning, KernelDone<void> done) {
  transact(std::move(request), seq, std::move(what), std::nullopt,
           [code, meaning = std::move(meaning), done = std::move(done)](Result<Messages> replies) {
             if (!replies) {
               Error e = replies.error();
               if (e.code == code) e.message += ": " + meaning;
               done(fail(std::move(e)));
               return;
             }
             done({});
           });
}

void NetlinkKernel::flush(KernelDone<void> done) {
  const uint32_t seq = socket_->nextSeq();
  transact(codec::encodeFlush(family_id_, seq), seq, "cannot flush the IPVS table", std::nullopt,
           [this, done = std::move(done)](Result<Messages> replies) {
             if (!replies) {
               done(fail(replies.error()));
               return;
             }
             ++writes_;
             done({});
           });
}

}  // namespace tandem::resources::ipvs
