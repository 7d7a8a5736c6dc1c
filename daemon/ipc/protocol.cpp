#include "ipc/protocol.h"

#include <qb/qbipc_common.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <tuple>

#include "common/text.h"

namespace tandem::ipc {

static_assert(sizeof(qb_ipc_request_header) == kRequestHeaderSize);
static_assert(sizeof(qb_ipc_response_header) == kResponseHeaderSize);
static_assert(kMaxMessageSize <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));

namespace {

using nlohmann::json;

constexpr size_t kMaxNameLength = 255;

// The body as text. Invalid UTF-8 (a node name from a hand-edited file, say) is replaced
// rather than thrown on: an answer with a U+FFFD beats no answer.
std::string dumpBody(const json& body) {
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

int errnoFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return EINVAL;
    case ErrorCode::kNotFound:
      return ENOENT;
    case ErrorCode::kAlreadyExists:
      return EEXIST;
    case ErrorCode::kPermissionDenied:
      return EACCES;
    case ErrorCode::kTimeout:
      return ETIMEDOUT;
    case ErrorCode::kTryAgain:
      return EAGAIN;
    case ErrorCode::kIo:
      return EIO;
    case ErrorCode::kParse:
      return EBADMSG;
    case ErrorCode::kUnavailable:
      return ENOTSUP;
    case ErrorCode::kInternal:
      return EPROTO;
  }
  return EPROTO;
}

// Parses a message body; what names the message in errors ("request", "response").
Result<json> parseBody(std::span<const uint8_t> body, std::string_view what) {
  if (body.empty()) {
    return fail(ErrorCode::kParse,
                "the " + std::string(what) + " has no body; expected a JSON object such as {}");
  }
  // nlohmann's lexer takes a NUL for the end of input, so "{}\0junk" would parse. JSON text
  // never holds a raw NUL; one here usually means a header that overstates the size and a
  // receive buffer's zeros behind the real body.
  if (auto nul = std::find(body.begin(), body.end(), uint8_t{0}); nul != body.end()) {
    return fail(ErrorCode::kParse, "the " + std::string(what) +
                                       " body holds a NUL byte at offset " +
                                       std::to_string(nul - body.begin()) +
                                       " (JSON never does; does the header overstate the size?)");
  }
  json parsed;
  try {
    parsed = json::parse(body.begin(), body.end());
  } catch (const json::parse_error& e) {
    // e.what() quotes the offending bytes, which may be anything; the offset is enough.
    return fail(ErrorCode::kParse, "the " + std::string(what) +
                                       " body is not valid JSON (syntax error at byte " +
                                       std::to_string(e.byte) + ")");
  }
  if (!parsed.is_object()) {
    return fail(ErrorCode::kParse, "the " + std::string(what) +
                                       " body must be a JSON object, not " +
                                       std::string(parsed.type_name()));
  }
  return parsed;
}

// The size field against the bytes that arrived, for a header of header_size bytes.
Result<void> checkSize(int32_t claimed, size_t arrived, size_t header_size, std::string_view what) {
  std::string w(what);
  if (claimed < 0 || static_cast<size_t>(claimed) < header_size) {
    return fail(ErrorCode::kParse, "bad " + w + " size " + std::to_string(claimed) +
                                       ": smaller than its " + std::to_string(header_size) +
                                       "-byte header");
  }
  if (static_cast<size_t>(claimed) > kMaxMessageSize) {
    return fail(ErrorCode::kParse, "the " + w + " claims " + std::to_string(claimed) +
                                       " bytes, more than the limit of " +
                                       std::to_string(kMaxMessageSize));
  }
  if (static_cast<size_t>(claimed) != arrived) {
    return fail(ErrorCode::kParse, w + " size mismatch: the header says " +
                                       std::to_string(claimed) + " bytes but " +
                                       std::to_string(arrived) + " arrived");
  }
  return {};
}

// Refuses fields a request does not take, with a hint for a likely typo.
Result<void> checkFields(RequestId id, const json& body, const std::vector<std::string>& known) {
  for (const auto& [key, value] : body.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string msg =
        "unknown field \"" + key + "\" in the " + std::string(requestName(id)) + " request";
    if (auto hint = closestMatch(key, known)) {
      msg += " (did you mean \"" + *hint + "\"?)";
    } else if (known.empty()) {
      msg += "; it takes no fields";
    } else {
      msg += "; it takes " + joinAlternatives(known, " and ");
    }
    return fail(ErrorCode::kInvalidArgument, msg);
  }
  return {};
}

Result<std::string> nameField(RequestId id, const json& body, const std::string& field) {
  std::string where = "\"" + field + "\" in the " + std::string(requestName(id)) + " request";
  auto it = body.find(field);
  if (it == body.end()) {
    return fail(ErrorCode::kInvalidArgument, "the " + std::string(requestName(id)) +
                                                 " request needs \"" + field + "\": a node name");
  }
  if (!it->is_string()) {
    return fail(ErrorCode::kInvalidArgument,
                where + " must be a node name (a string), not " + std::string(it->type_name()));
  }
  std::string value = it->get<std::string>();
  if (value.empty() || value.size() > kMaxNameLength) {
    return fail(ErrorCode::kInvalidArgument, where + " must be a node name of 1 to " +
                                                 std::to_string(kMaxNameLength) + " bytes");
  }
  return value;
}

// "lifetime_ms", optional: an integer within [kMinLifetimeMs, kMaxLifetimeMs].
Result<std::optional<uint64_t>> lifetimeField(RequestId id, const json& body) {
  auto it = body.find("lifetime_ms");
  if (it == body.end()) return std::optional<uint64_t>();
  const std::string where = "\"lifetime_ms\" in the " + std::string(requestName(id)) + " request";
  const std::string range =
      std::to_string(kMinLifetimeMs) + " to " + std::to_string(kMaxLifetimeMs);
  if (!it->is_number_integer()) {
    return fail(ErrorCode::kInvalidArgument, where + " must be an integer of " + range +
                                                 " ms, not " + std::string(it->type_name()));
  }
  if (it->is_number_unsigned() || it->get<int64_t>() >= 0) {
    const uint64_t ms = it->get<uint64_t>();
    if (ms >= kMinLifetimeMs && ms <= kMaxLifetimeMs) return std::optional<uint64_t>(ms);
  }
  return fail(ErrorCode::kInvalidArgument,
              where + " is " + it->dump() + "; it must be " + range + " ms (a second to 7 days)");
}

}  // namespace

namespace {

using enum RequestId;
constexpr Access kAnyone = Access::kAnyone;
constexpr Access kGroup = Access::kControlGroup;

// The requests. An id is its place here (a test checks it): new ones go at the end.
constexpr RequestDecl kRequests[] = {
    {kStatus, "status", kAnyone, false, "status", "the cluster as this node sees it"},
    {kStandby, "standby", kGroup, true, "node standby", "a node in standby, or back online"},
    {kMove, "move", kGroup, true, "resource move", "the services to another node"},
    {kClear, "clear", kGroup, true, "resource clear", "clear failures and an operator's move"},
    {kReload, "reload", kGroup, true, "config reload", "re-read the config, as SIGHUP does"},
    {kDrain, "drain", kGroup, true, "real drain", "a real server drained, or enabled again"},
    {kIpvs, "ipvs", kAnyone, false, "ipvs show", "the IPVS table on this director"},
    {kSync, "sync", kAnyone, false, "sync status", "connection sync on this director"},
    {kMaintenance, "maintenance", kGroup, true, "maintenance on",
     "maintenance mode on or off, cluster wide"},
    {kConfigDiff, "config-diff", kGroup, false, "config diff",
     "what a reload of the file would change"},
    {kConfigShow, "config-show", kGroup, false, "config show", "the running config as it was read"},
    {kHistory, "history", kGroup, false, "history", "what happened, and who asked what"},
    {kExplain, "explain", kAnyone, false, "explain", "why the ACTIVE is active, and what is next"},
    {kDrains, "drains", kAnyone, false, "real list", "the drained real servers and their progress"},
};

constexpr bool idsArePlaces() {
  for (size_t i = 0; i < std::size(kRequests); ++i) {
    if (static_cast<size_t>(kRequests[i].id) != i + 1) return false;
  }
  return true;
}
static_assert(idsArePlaces(), "kRequests: each request at the place its id says (1-based)");

// "1 to 14: status, standby, ...": the unknown-id answer's list.
std::string declaredList() {
  std::string names;
  for (const RequestDecl& d : kRequests) names += (names.empty() ? "" : ", ") + std::string(d.name);
  return "1 to " + std::to_string(std::size(kRequests)) + ": " + names;
}

}  // namespace

std::span<const RequestDecl> requestDecls() { return kRequests; }

const RequestDecl& declarationOf(RequestId id) {
  // Ids are 1-based places in the table (requestIdFromWire never makes another).
  return kRequests[static_cast<size_t>(id) - 1];
}

std::string_view requestName(RequestId id) { return declarationOf(id).name; }

std::optional<RequestId> requestIdFromWire(int32_t raw) {
  if (raw < 1 || static_cast<size_t>(raw) > std::size(kRequests)) return std::nullopt;
  return static_cast<RequestId>(raw);
}

bool needsControlGroup(RequestId id) { return declarationOf(id).access == Access::kControlGroup; }

Result<Bytes> encodeRequest(RequestId id, const json& body) {
  std::string text = dumpBody(body);
  size_t total = kRequestHeaderSize + text.size();
  if (total > kMaxMessageSize) {
    return fail(ErrorCode::kInvalidArgument,
                "a " + std::string(requestName(id)) + " request of " + std::to_string(total) +
                    " bytes exceeds the limit of " + std::to_string(kMaxMessageSize));
  }
  qb_ipc_request_header header{};
  header.id = static_cast<int32_t>(id);
  header.size = static_cast<int32_t>(total);
  Bytes out(total);
  std::memcpy(out.data(), &header, sizeof header);
  std::memcpy(out.data() + kRequestHeaderSize, text.data(), text.size());
  return out;
}

int32_t rawRequestId(std::span<const uint8_t> bytes) {
  if (bytes.size() < sizeof(int32_t)) return 0;
  int32_t id = 0;
  std::memcpy(&id, bytes.data(), sizeof id);
  return id;
}

Result<Request> decodeRequest(std::span<const uint8_t> bytes) {
  if (bytes.size() < kRequestHeaderSize) {
    return fail(ErrorCode::kParse, "truncated request: " + std::to_string(bytes.size()) +
                                       " bytes, shorter than its " +
                                       std::to_string(kRequestHeaderSize) + "-byte header");
  }
  qb_ipc_request_header header{};
  std::memcpy(&header, bytes.data(), sizeof header);
  if (auto ok = checkSize(header.size, bytes.size(), kRequestHeaderSize, "request"); !ok) {
    return fail(ok.error());
  }
  auto id = requestIdFromWire(header.id);
  if (!id) {
    return fail(ErrorCode::kInvalidArgument, "unknown request id " + std::to_string(header.id) +
                                                 " (this tandemd knows " + declaredList() +
                                                 "); is tandem newer than tandemd?");
  }
  auto body = parseBody(bytes.subspan(kRequestHeaderSize), "request");
  if (!body) return fail(body.error());
  return Request{*id, std::move(*body)};
}

Result<Bytes> encodeResponse(int32_t id, const json& body) {
  std::string text = dumpBody(body);
  size_t total = kResponseHeaderSize + text.size();
  if (total > kMaxMessageSize) {
    return fail(ErrorCode::kInvalidArgument, "a response of " + std::to_string(total) +
                                                 " bytes exceeds the limit of " +
                                                 std::to_string(kMaxMessageSize));
  }
  qb_ipc_response_header header{};
  header.id = id;
  header.size = static_cast<int32_t>(total);
  header.error = 0;
  auto ok = body.find("ok");
  if (ok == body.end() || !ok->is_boolean() || !ok->get<bool>()) {
    auto code = body.find("code");
    header.error = -errnoFor(code != body.end() && code->is_string()
                                 ? errorCodeFromName(code->get<std::string>())
                                 : ErrorCode::kInternal);
  }
  Bytes out(total);
  std::memcpy(out.data(), &header, sizeof header);
  std::memcpy(out.data() + kResponseHeaderSize, text.data(), text.size());
  return out;
}

Result<json> decodeResponse(std::span<const uint8_t> bytes, int32_t expected_id) {
  if (bytes.size() < kResponseHeaderSize) {
    return fail(ErrorCode::kParse, "truncated response: " + std::to_string(bytes.size()) +
                                       " bytes, shorter than its " +
                                       std::to_string(kResponseHeaderSize) + "-byte header");
  }
  qb_ipc_response_header header{};
  std::memcpy(&header, bytes.data(), sizeof header);
  if (auto ok = checkSize(header.size, bytes.size(), kResponseHeaderSize, "response"); !ok) {
    return fail(ok.error());
  }
  if (header.id != expected_id) {
    return fail(ErrorCode::kParse, "the response answers request id " + std::to_string(header.id) +
                                       ", not " + std::to_string(expected_id));
  }
  auto body = parseBody(bytes.subspan(kResponseHeaderSize), "response");
  if (!body) return fail(body.error());
  auto ok = body->find("ok");
  if (ok == body->end() || !ok->is_boolean()) {
    return fail(ErrorCode::kParse, "the response has no boolean \"ok\"");
  }
  if (!ok->get<bool>()) {
    auto err = body->find("error");
    if (err == body->end() || !err->is_string()) {
      return fail(ErrorCode::kParse, "a failed response has no \"error\" string");
    }
  }
  return body;
}

json okBody(const json& extra) {
  json out = json::object();
  out["ok"] = true;
  if (extra.is_object()) {
    for (const auto& [key, value] : extra.items()) {
      if (key != "ok") out[key] = value;
    }
  }
  return out;
}

json errorBody(const Error& error) {
  return json{
      {"ok", false}, {"error", error.message}, {"code", std::string(errorCodeName(error.code))}};
}

Result<json> bodyResult(const json& body) {
  auto ok = body.find("ok");
  if (ok != body.end() && ok->is_boolean() && ok->get<bool>()) return body;
  std::string message = "tandemd reported a failure without saying why";
  auto err = body.find("error");
  if (err != body.end() && err->is_string()) message = err->get<std::string>();
  ErrorCode code = ErrorCode::kInternal;
  auto name = body.find("code");
  if (name != body.end() && name->is_string()) code = errorCodeFromName(name->get<std::string>());
  return fail(code, message);
}

ErrorCode errorCodeFromName(std::string_view name) {
  for (ErrorCode c :
       {ErrorCode::kInvalidArgument, ErrorCode::kNotFound, ErrorCode::kAlreadyExists,
        ErrorCode::kPermissionDenied, ErrorCode::kTimeout, ErrorCode::kTryAgain, ErrorCode::kIo,
        ErrorCode::kParse, ErrorCode::kUnavailable, ErrorCode::kInternal}) {
    if (errorCodeName(c) == name) return c;
  }
  return ErrorCode::kInternal;
}

json standbyBody(const StandbyArgs& args) {
  json body{{"node", args.node}, {"on", args.on}};
  if (args.lifetime_ms) body["lifetime_ms"] = *args.lifetime_ms;
  return body;
}

json moveBody(const MoveArgs& args) {
  json body{{"target", args.target}};
  if (args.lifetime_ms) body["lifetime_ms"] = *args.lifetime_ms;
  return body;
}

json maintenanceBody(const MaintenanceArgs& args) { return json{{"on", args.on}}; }

json drainBody(const DrainArgs& args) {
  return json{{"service", args.service}, {"server", args.server}, {"on", args.on}};
}

Result<StandbyArgs> parseStandbyArgs(const json& body) {
  if (auto ok = checkFields(RequestId::kStandby, body, {"node", "on", "lifetime_ms"}); !ok) {
    return fail(ok.error());
  }
  auto node = nameField(RequestId::kStandby, body, "node");
  if (!node) return fail(node.error());
  auto on = body.find("on");
  if (on == body.end()) {
    return fail(ErrorCode::kInvalidArgument,
                "the standby request needs \"on\": true to enter standby, false to leave it");
  }
  if (!on->is_boolean()) {
    return fail(
        ErrorCode::kInvalidArgument,
        "\"on\" in the standby request must be true or false, not " + std::string(on->type_name()));
  }
  auto lifetime = lifetimeField(RequestId::kStandby, body);
  if (!lifetime) return fail(lifetime.error());
  if (*lifetime && !on->get<bool>()) {
    return fail(ErrorCode::kInvalidArgument,
                "\"lifetime_ms\" in the standby request goes with \"on\": true; leaving standby "
                "takes none");
  }
  return StandbyArgs{std::move(*node), on->get<bool>(), *lifetime};
}

Result<MoveArgs> parseMoveArgs(const json& body) {
  if (auto ok = checkFields(RequestId::kMove, body, {"target", "lifetime_ms"}); !ok) {
    return fail(ok.error());
  }
  auto target = nameField(RequestId::kMove, body, "target");
  if (!target) return fail(target.error());
  auto lifetime = lifetimeField(RequestId::kMove, body);
  if (!lifetime) return fail(lifetime.error());
  return MoveArgs{std::move(*target), *lifetime};
}

Result<uint64_t> parseHistoryArgs(const json& body) {
  if (auto ok = checkFields(RequestId::kHistory, body, {"since_ms"}); !ok) return fail(ok.error());
  auto it = body.find("since_ms");
  if (it == body.end()) return uint64_t{0};
  if (!it->is_number_unsigned()) {
    return fail(ErrorCode::kInvalidArgument,
                "\"since_ms\" in the history request must be a wall-clock time in ms since the "
                "epoch (an unsigned integer), not " +
                    it->dump());
  }
  return it->get<uint64_t>();
}

Result<MaintenanceArgs> parseMaintenanceArgs(const json& body) {
  if (auto ok = checkFields(RequestId::kMaintenance, body, {"on"}); !ok) return fail(ok.error());
  auto on = body.find("on");
  if (on == body.end() || !on->is_boolean()) {
    return fail(ErrorCode::kInvalidArgument,
                "the maintenance request needs \"on\": true to enter maintenance mode, false to "
                "leave it");
  }
  return MaintenanceArgs{on->get<bool>()};
}

Result<DrainArgs> parseDrainArgs(const json& body) {
  if (auto ok = checkFields(RequestId::kDrain, body, {"service", "server", "on"}); !ok) {
    return fail(ok.error());
  }
  DrainArgs args;
  for (auto [field, out, what] :
       {std::tuple{"service", &args.service,
                   "a virtual service (\"tcp ADDR:PORT\", ADDR:PORT, "
                   "\"fwmark N\" or its name)"},
        std::tuple{"server", &args.server, "a real server (ADDR:PORT or ADDR)"}}) {
    auto it = body.find(field);
    if (it == body.end() || !it->is_string() || it->get<std::string>().empty() ||
        it->get<std::string>().size() > 128) {
      return fail(ErrorCode::kInvalidArgument, std::string("the drain request needs \"") + field +
                                                   "\": " + what +
                                                   ", as a string of 1 to 128 bytes");
    }
    *out = it->get<std::string>();
  }
  auto on = body.find("on");
  if (on == body.end() || !on->is_boolean()) {
    return fail(ErrorCode::kInvalidArgument,
                "the drain request needs \"on\": true to drain the real server, false to enable "
                "it again");
  }
  args.on = on->get<bool>();
  return args;
}

Result<void> parseNoArgs(RequestId id, const json& body) { return checkFields(id, body, {}); }

}  // namespace tandem::ipc
