#include "ipc/admin_service.h"

#include <cstring>
#include <exception>
#include <string>

namespace tandem::ipc {

namespace {

using nlohmann::json;

std::string who(const Peer& peer) {
  return "uid=" + std::to_string(peer.credentials.uid) +
         " pid=" + std::to_string(peer.credentials.pid);
}

// Enough of a body to see what was asked, without a megabyte in the log.
std::string shortDump(const json& body) {
  constexpr size_t kMax = 200;
  std::string text = body.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

json fromResult(const Result<json>& r) {
  if (!r) return errorBody(r.error());
  return okBody(*r);
}

}  // namespace

AdminService::AdminService(AdminHandler& handler, AccessPolicy policy, AuditLog audit,
                           AdminClock clock)
    : handler_(handler),
      policy_(std::move(policy)),
      audit_(std::move(audit)),
      clock_(std::move(clock)) {}

Bytes AdminService::handle(std::span<const uint8_t> bytes, Peer& peer) {
  const int32_t id = rawRequestId(bytes);
  json body;
  // Checked in order of cost: the size, the header's id, who asks; only then the JSON.
  const std::optional<RequestId> known = requestIdFromWire(id);
  // The size the header claims: libqb hands over that much of its buffer (a negative or short
  // one is decodeRequest's to word, before it reads any JSON).
  int32_t claimed = 0;
  if (bytes.size() >= kRequestHeaderSize) std::memcpy(&claimed, bytes.data() + 8, sizeof claimed);
  if (claimed > static_cast<int32_t>(kMaxRequestSize)) {
    body = malformed(Error{ErrorCode::kInvalidArgument, "a request of " + std::to_string(claimed) +
                                                            " bytes; the largest is " +
                                                            std::to_string(kMaxRequestSize)},
                     peer);
  } else if (!known) {
    // decodeRequest words this one best (a short header, an unknown id).
    auto request = decodeRequest(bytes);
    body = malformed(
        request ? Error{ErrorCode::kInvalidArgument, "unknown request"} : request.error(), peer);
  } else if (auto allowed = policy_.authorize(*known, peer); !allowed) {
    ++counters_.refused;
    auditNoise("admin request refused request=" + std::string(requestName(*known)) + " " +
               who(peer) + " reason=\"" + allowed.error().message + "\"");
    body = errorBody(allowed.error());
  } else if (auto request = decodeRequest(bytes); !request) {
    body = malformed(request.error(), peer);
  } else {
    body = answer(*request, peer);
  }
  auto out = encodeResponse(id, body);
  if (!out) {
    out = encodeResponse(
        id, errorBody(Error{ErrorCode::kInternal,
                            "tandemd could not send its answer: " + out.error().message}));
  }
  // An error body is a few hundred bytes, far under the limit, so this holds.
  return out ? std::move(*out) : Bytes{};
}

json AdminService::malformed(const Error& error, const Peer& peer) {
  ++counters_.malformed;
  auditNoise("malformed admin request " + who(peer) + " reason=\"" + error.message + "\"");
  return errorBody(error);
}

void AdminService::auditNoise(const std::string& line) {
  if (!clock_) {
    audit(line);
    return;
  }
  const auto now = clock_();
  if (window_lines_ == 0 || now - window_start_ >= kNoiseLogWindow) {
    if (unlogged_ > 0) {
      audit("admin channel: " + std::to_string(unlogged_) +
            " more malformed or refused requests were not logged one by one");
    }
    window_start_ = now;
    window_lines_ = 0;
    unlogged_ = 0;
  }
  if (window_lines_ < kNoiseLogBurst) {
    ++window_lines_;
    audit(line);
  } else {
    ++unlogged_;
  }
}

json AdminService::answer(const Request& request, Peer& peer) {
  // Authorised by handle(), from the header, before the body was parsed.
  const std::string name(requestName(request.id));
  try {
    json body = dispatch(request);
    const RequestDecl& decl = declarationOf(request.id);
    if (decl.access == Access::kControlGroup) {
      // Who asked for what only root and control.group may, and what came of it.
      auto error = body.find("error");
      const std::string result =
          error == body.end() ? std::string("ok") : "\"" + error->get<std::string>() + "\"";
      audit("admin request request=" + name + " " + who(peer) + " body=" + shortDump(request.body) +
            " result=" + result);
      // A change also goes into the counters, the history and the journal; a read does not.
      if (decl.changes) {
        ++counters_.changes;
        handler_.audited(name, who(peer), shortDump(request.body), result);
      }
    }
    return body;
  } catch (const std::exception& e) {
    // A bug in the daemon's handler must not take the daemon down with the request.
    audit("admin request failed request=" + name + " " + who(peer) + " exception=\"" + e.what() +
          "\"");
    return errorBody(Error{ErrorCode::kInternal, "tandemd failed while answering " + name + ": " +
                                                     e.what() + "; see the tandemd log"});
  }
}

json AdminService::dispatch(const Request& request) {
  switch (request.id) {
    case RequestId::kStatus: {
      if (auto ok = parseNoArgs(request.id, request.body); !ok) return errorBody(ok.error());
      json status = handler_.status();
      if (status.is_object()) {
        status["admin_requests"] = {{"malformed", counters_.malformed},
                                    {"refused", counters_.refused},
                                    {"changes", counters_.changes}};
      }
      return okBody(status);
    }
    case RequestId::kStandby: {
      auto args = parseStandbyArgs(request.body);
      if (!args) return errorBody(args.error());
      return fromResult(handler_.standby(*args));
    }
    case RequestId::kMove: {
      auto args = parseMoveArgs(request.body);
      if (!args) return errorBody(args.error());
      return fromResult(handler_.move(*args));
    }
    case RequestId::kClear: {
      if (auto ok = parseNoArgs(request.id, request.body); !ok) return errorBody(ok.error());
      return fromResult(handler_.clear());
    }
    case RequestId::kReload: {
      if (auto ok = parseNoArgs(request.id, request.body); !ok) return errorBody(ok.error());
      return fromResult(handler_.reload());
    }
    case RequestId::kIpvs: {
      if (auto ok = parseNoArgs(request.id, request.body); !ok) return errorBody(ok.error());
      return fromResult(handler_.ipvs());
    }
    case RequestId::kSync: {
      if (auto ok = parseNoArgs(request.id, request.body); !ok) return errorBody(ok.error());
      return fromResult(handler_.sync());
    }
    case RequestId::kMaintenance: {
      auto args = parseMaintenanceArgs(request.body);
      if (!args) return errorBody(args.error());
      return fromResult(handler_.maintenance(args->on));
    }
    case RequestId::kConfigDiff: {
      if (auto ok = parseNoArgs(request.id, request.body); !ok) return errorBody(ok.error());
      return fromResult(handler_.configDiff());
    }
    case RequestId::kConfigShow: {
      if (auto ok = parseNoArgs(request.id, request.body); !ok) return errorBody(ok.error());
      return fromResult(handler_.configShow());
    }
    case RequestId::kHistory: {
      auto since = parseHistoryArgs(request.body);
      if (!since) return errorBody(since.error());
      return fromResult(handler_.history(*since));
    }
    case RequestId::kExplain: {
      if (auto ok = parseNoArgs(request.id, request.body); !ok) return errorBody(ok.error());
      return fromResult(handler_.explain());
    }
    case RequestId::kDrain: {
      auto args = parseDrainArgs(request.body);
      if (!args) return errorBody(args.error());
      return fromResult(handler_.drain(*args));
    }
    case RequestId::kDrains: {
      if (auto ok = parseNoArgs(request.id, request.body); !ok) return errorBody(ok.error());
      return fromResult(handler_.drains());
    }
  }
  return errorBody(Error{ErrorCode::kInternal, "unhandled request"});
}

void AdminService::audit(const std::string& line) const {
  if (audit_) audit_(line);
}

}  // namespace tandem::ipc
