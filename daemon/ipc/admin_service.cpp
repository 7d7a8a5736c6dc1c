#include "ipc/admin_service.h"

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

AdminService::AdminService(AdminHandler& handler, AccessPolicy policy, AuditLog audit)
    : handler_(handler), policy_(std::move(policy)), audit_(std::move(audit)) {}

Bytes AdminService::handle(std::span<const uint8_t> bytes, Peer& peer) {
  const int32_t id = rawRequestId(bytes);
  json body;
  auto request = decodeRequest(bytes);
  if (!request) {
    audit("malformed admin request " + who(peer) + " reason=\"" + request.error().message + "\"");
    body = errorBody(request.error());
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

json AdminService::answer(const Request& request, Peer& peer) {
  const std::string name(requestName(request.id));
  if (auto allowed = policy_.authorize(request.id, peer); !allowed) {
    audit("admin request refused request=" + name + " " + who(peer) + " reason=\"" +
          allowed.error().message + "\"");
    return errorBody(allowed.error());
  }
  try {
    json body = dispatch(request);
    if (isMutating(request.id)) {
      // Who changed the cluster, how, and what came of it.
      auto error = body.find("error");
      audit("admin request request=" + name + " " + who(peer) + " body=" + shortDump(request.body) +
            " result=" +
            (error == body.end() ? std::string("ok") : "\"" + error->get<std::string>() + "\""));
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
      return okBody(handler_.status());
    }
    case RequestId::kStandby: {
      auto args = parseStandbyArgs(request.body);
      if (!args) return errorBody(args.error());
      return fromResult(handler_.standby(args->node, args->on));
    }
    case RequestId::kMove: {
      auto args = parseMoveArgs(request.body);
      if (!args) return errorBody(args.error());
      return fromResult(handler_.move(args->target));
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
    case RequestId::kDrain:
      return errorBody(
          Error{ErrorCode::kUnavailable, "drain is reserved and not implemented by this tandemd"});
  }
  return errorBody(Error{ErrorCode::kInternal, "unhandled request"});
}

void AdminService::audit(const std::string& line) const {
  if (audit_) audit_(line);
}

}  // namespace tandem::ipc
