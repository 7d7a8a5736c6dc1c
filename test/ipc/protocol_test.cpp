// The admin protocol's codec: what goes on the wire, and every way a message can be wrong.
#include "ipc/protocol.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <set>
#include <string>

namespace tandem::ipc {
namespace {

using nlohmann::json;

Bytes withHeader(int32_t id, int32_t size, std::string_view body) {
  Bytes out(kRequestHeaderSize + body.size(), 0);
  std::memcpy(out.data(), &id, sizeof id);
  std::memcpy(out.data() + 8, &size, sizeof size);
  std::memcpy(out.data() + kRequestHeaderSize, body.data(), body.size());
  return out;
}

Bytes request(int32_t id, std::string_view body) {
  return withHeader(id, static_cast<int32_t>(kRequestHeaderSize + body.size()), body);
}

std::string decodeError(const Bytes& bytes) {
  auto r = decodeRequest(bytes);
  EXPECT_FALSE(r.has_value());
  return r ? "" : r.error().message;
}

TEST(ProtocolTest, EveryRequestRoundTripsThroughEncodeAndDecode) {
  for (RequestId id : {RequestId::kStatus, RequestId::kStandby, RequestId::kMove, RequestId::kClear,
                       RequestId::kReload, RequestId::kDrain}) {
    json body = {{"node", "lb1"}, {"on", true}};
    auto bytes = encodeRequest(id, body);
    ASSERT_TRUE(bytes.has_value());
    auto back = decodeRequest(*bytes);
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(back->id, id);
    EXPECT_EQ(back->body, body);
  }
}

TEST(ProtocolTest, RequestCarriesTheQbHeaderIdAndTotalSize) {
  auto bytes = encodeRequest(RequestId::kMove, json{{"target", "lb2"}});
  ASSERT_TRUE(bytes.has_value());
  int32_t id = 0;
  int32_t size = 0;
  std::memcpy(&id, bytes->data(), 4);
  std::memcpy(&size, bytes->data() + 8, 4);
  EXPECT_EQ(id, 3);
  EXPECT_EQ(static_cast<size_t>(size), bytes->size());
  EXPECT_EQ(std::string(bytes->begin() + 16, bytes->end()), R"({"target":"lb2"})");
}

TEST(ProtocolTest, TruncatedHeaderIsRefused) {
  for (size_t n : {0u, 1u, 4u, 15u}) {
    Bytes bytes(n, 0x01);
    EXPECT_NE(decodeError(bytes).find("truncated request"), std::string::npos) << n;
  }
}

TEST(ProtocolTest, SizeFieldThatDisagreesWithWhatArrivedIsRefused) {
  EXPECT_EQ(decodeError(withHeader(1, 1000, "{}")),
            "request size mismatch: the header says 1000 bytes but 18 arrived");
  EXPECT_EQ(decodeError(withHeader(1, 17, "{}")),
            "request size mismatch: the header says 17 bytes but 18 arrived");
}

TEST(ProtocolTest, SizeFieldSmallerThanTheHeaderOrNegativeIsRefused) {
  EXPECT_EQ(decodeError(withHeader(1, 8, "{}")),
            "bad request size 8: smaller than its 16-byte header");
  EXPECT_EQ(decodeError(withHeader(1, -5, "{}")),
            "bad request size -5: smaller than its 16-byte header");
}

TEST(ProtocolTest, SizeFieldOverTheLimitIsRefused) {
  EXPECT_EQ(decodeError(withHeader(1, 2 * 1024 * 1024, "{}")),
            "the request claims 2097152 bytes, more than the limit of 1048576");
}

TEST(ProtocolTest, UnknownRequestIdIsRefusedWithAVersionHint) {
  std::string e = decodeError(request(99, "{}"));
  EXPECT_NE(e.find("unknown request id 99"), std::string::npos) << e;
  EXPECT_NE(e.find("is tandem newer than tandemd?"), std::string::npos) << e;
  EXPECT_NE(decodeError(request(0, "{}")).find("unknown request id 0"), std::string::npos);
  EXPECT_NE(decodeError(request(-3, "{}")).find("unknown request id -3"), std::string::npos);
}

TEST(ProtocolTest, EmptyBodyIsRefused) {
  EXPECT_EQ(decodeError(request(1, "")),
            "the request has no body; expected a JSON object such as {}");
}

TEST(ProtocolTest, NonJsonBodyIsRefusedWithTheOffset) {
  EXPECT_EQ(decodeError(request(1, "garbage")),
            "the request body is not valid JSON (syntax error at byte 1)");
  EXPECT_NE(decodeError(request(1, "{\"node\": ")).find("not valid JSON"), std::string::npos);
  EXPECT_NE(decodeError(request(1, std::string("\xff\xfe\x01\x02", 4))).find("not valid JSON"),
            std::string::npos);
}

TEST(ProtocolTest, InvalidUtf8InAStringIsRefused) {
  EXPECT_NE(decodeError(request(2, "{\"node\": \"\xc3\x28\"}")).find("not valid JSON"),
            std::string::npos);
}

TEST(ProtocolTest, NulPaddingAfterTheObjectIsRefused) {
  // What a header that over-states its size exposes: the receive buffer's stale zeros.
  EXPECT_EQ(decodeError(request(1, std::string("{}\0\0\0\0", 6))),
            "the request body holds a NUL byte at offset 2 (JSON never does; does the header "
            "overstate the size?)");
  EXPECT_NE(decodeError(request(2, std::string("{\"node\":\"a\0b\",\"on\":true}", 24)))
                .find("NUL byte at offset 10"),
            std::string::npos);
}

TEST(ProtocolTest, BodyThatIsNotAnObjectIsRefused) {
  EXPECT_EQ(decodeError(request(1, "[1,2]")), "the request body must be a JSON object, not array");
  EXPECT_EQ(decodeError(request(1, "42")), "the request body must be a JSON object, not number");
  EXPECT_EQ(decodeError(request(1, "\"x\"")), "the request body must be a JSON object, not string");
  EXPECT_EQ(decodeError(request(1, "null")), "the request body must be a JSON object, not null");
}

TEST(ProtocolTest, DeeplyNestedBodyIsRefusedWithoutExhaustingTheStack) {
  std::string deep(200000, '[');
  EXPECT_NE(decodeError(request(1, deep)).find("not valid JSON"), std::string::npos);
  std::string balanced = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(decodeError(request(1, balanced)), "the request body must be a JSON object, not array");
}

TEST(ProtocolTest, RandomBytesNeverThrow) {
  std::mt19937 rng(20240611);
  for (int i = 0; i < 3000; ++i) {
    Bytes bytes(rng() % 64);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    if (bytes.size() >= kRequestHeaderSize && i % 2 == 0) {
      // Make the header plausible so the body parser gets exercised too.
      int32_t id = static_cast<int32_t>(1 + rng() % 6);
      int32_t size = static_cast<int32_t>(bytes.size());
      std::memcpy(bytes.data(), &id, 4);
      std::memcpy(bytes.data() + 8, &size, 4);
    }
    EXPECT_NO_THROW((void)decodeRequest(bytes));
    EXPECT_NO_THROW((void)decodeResponse(bytes, 1));
  }
}

TEST(ProtocolTest, RequestOverTheLimitIsNotEncoded) {
  auto r = encodeRequest(RequestId::kMove, json{{"target", std::string(kMaxMessageSize, 'x')}});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("exceeds the limit of 1048576"), std::string::npos);
}

TEST(ProtocolTest, ResponseRoundTripsAndItsErrorFieldSummarisesTheBody) {
  auto ok = encodeResponse(1, okBody(json{{"cluster", "prod"}}));
  ASSERT_TRUE(ok.has_value());
  int32_t error = 1;
  std::memcpy(&error, ok->data() + 16, 4);
  EXPECT_EQ(error, 0);
  auto back = decodeResponse(*ok, 1);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, (json{{"ok", true}, {"cluster", "prod"}}));

  auto refused = encodeResponse(2, errorBody(Error{ErrorCode::kPermissionDenied, "no"}));
  ASSERT_TRUE(refused.has_value());
  std::memcpy(&error, refused->data() + 16, 4);
  EXPECT_EQ(error, -EACCES);
}

TEST(ProtocolTest, ResponseToAnotherRequestIsRefused) {
  auto bytes = encodeResponse(2, okBody());
  ASSERT_TRUE(bytes.has_value());
  auto r = decodeResponse(*bytes, 1);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "the response answers request id 2, not 1");
}

TEST(ProtocolTest, ResponseWithoutOkOrWithoutErrorIsRefused) {
  auto no_ok = encodeResponse(1, json{{"cluster", "prod"}});
  ASSERT_TRUE(no_ok.has_value());
  EXPECT_EQ(decodeResponse(*no_ok, 1).error().message, "the response has no boolean \"ok\"");
  auto no_error = encodeResponse(1, json{{"ok", false}});
  ASSERT_TRUE(no_error.has_value());
  EXPECT_EQ(decodeResponse(*no_error, 1).error().message,
            "a failed response has no \"error\" string");
}

TEST(ProtocolTest, TruncatedResponseIsRefused) {
  auto bytes = encodeResponse(1, okBody());
  ASSERT_TRUE(bytes.has_value());
  bytes->resize(20);
  EXPECT_NE(decodeResponse(*bytes, 1).error().message.find("truncated response"),
            std::string::npos);
}

TEST(ProtocolTest, FailedBodyBecomesAnErrorWithItsCode) {
  auto r = bodyResult(errorBody(Error{ErrorCode::kNotFound, "no node lb9"}));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().message, "no node lb9");
  EXPECT_TRUE(bodyResult(okBody()).has_value());
  EXPECT_EQ(bodyResult(json{{"ok", false}, {"error", "x"}, {"code", "bogus"}}).error().code,
            ErrorCode::kInternal);
}

TEST(ProtocolTest, EveryErrorCodeNameReadsBack) {
  for (ErrorCode c :
       {ErrorCode::kInvalidArgument, ErrorCode::kNotFound, ErrorCode::kAlreadyExists,
        ErrorCode::kPermissionDenied, ErrorCode::kTimeout, ErrorCode::kTryAgain, ErrorCode::kIo,
        ErrorCode::kParse, ErrorCode::kUnavailable, ErrorCode::kInternal}) {
    EXPECT_EQ(errorCodeFromName(errorCodeName(c)), c);
  }
}

TEST(ProtocolTest, OkBodyKeepsOkTrueWhateverTheHandlerReturned) {
  EXPECT_EQ(okBody(json{{"ok", false}, {"x", 1}}), (json{{"ok", true}, {"x", 1}}));
  EXPECT_EQ(okBody(json::array()), (json{{"ok", true}}));
}

TEST(ProtocolTest, StandbyArgumentsAreParsed) {
  auto a = parseStandbyArgs(json{{"node", "lb1"}, {"on", false}});
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(a->node, "lb1");
  EXPECT_FALSE(a->on);
  auto round = parseStandbyArgs(standbyBody(StandbyArgs{"lb2", true, std::nullopt}));
  ASSERT_TRUE(round.has_value());
  EXPECT_EQ(round->node, "lb2");
  EXPECT_TRUE(round->on);
}

TEST(ProtocolTest, StandbyWithMissingOrMistypedFieldsIsRefusedClearly) {
  EXPECT_EQ(parseStandbyArgs(json{{"on", true}}).error().message,
            "the standby request needs \"node\": a node name");
  EXPECT_EQ(parseStandbyArgs(json{{"node", 7}, {"on", true}}).error().message,
            "\"node\" in the standby request must be a node name (a string), not number");
  EXPECT_EQ(parseStandbyArgs(json{{"node", ""}, {"on", true}}).error().message,
            "\"node\" in the standby request must be a node name of 1 to 255 bytes");
  EXPECT_EQ(parseStandbyArgs(json{{"node", "lb1"}}).error().message,
            "the standby request needs \"on\": true to enter standby, false to leave it");
  EXPECT_EQ(parseStandbyArgs(json{{"node", "lb1"}, {"on", "yes"}}).error().message,
            "\"on\" in the standby request must be true or false, not string");
  EXPECT_EQ(parseStandbyArgs(json{{"node", "lb1"}, {"on", true}}).value().node, "lb1");
}

TEST(ProtocolTest, UnknownFieldIsRefusedWithASuggestion) {
  auto r = parseStandbyArgs(json{{"nod", "lb1"}, {"on", true}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message,
            "unknown field \"nod\" in the standby request (did you mean \"node\"?)");
  EXPECT_EQ(parseNoArgs(RequestId::kClear, json{{"force", true}}).error().message,
            "unknown field \"force\" in the clear request; it takes no fields");
  EXPECT_TRUE(parseNoArgs(RequestId::kReload, json::object()).has_value());
}

TEST(ProtocolTest, MoveArgumentsAreParsed) {
  EXPECT_EQ(parseMoveArgs(moveBody(MoveArgs{"lb2", std::nullopt})).value().target, "lb2");
  EXPECT_EQ(parseMoveArgs(json::object()).error().message,
            "the move request needs \"target\": a node name");
  EXPECT_EQ(parseMoveArgs(json{{"target", nullptr}}).error().message,
            "\"target\" in the move request must be a node name (a string), not null");
}

// The ipvs request (7): read-only like status, no fields, and known to the decoder.
TEST(ProtocolTest, IpvsRequestIsSevenAndRoundTrips) {
  EXPECT_EQ(static_cast<int32_t>(RequestId::kIpvs), 7);
  EXPECT_EQ(requestName(RequestId::kIpvs), "ipvs");
  EXPECT_EQ(requestIdFromWire(7), RequestId::kIpvs);
  EXPECT_EQ(requestIdFromWire(15), std::nullopt);
  auto bytes = encodeRequest(RequestId::kIpvs, json::object());
  ASSERT_TRUE(bytes.has_value());
  auto back = decodeRequest(*bytes);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->id, RequestId::kIpvs);
  EXPECT_EQ(back->body, json::object());
}

TEST(ProtocolTest, SyncRequestIsEightReadOnlyAndTakesNoFields) {
  EXPECT_EQ(static_cast<int32_t>(RequestId::kSync), 8);
  EXPECT_EQ(requestName(RequestId::kSync), "sync");
  EXPECT_EQ(requestIdFromWire(8), RequestId::kSync);
  EXPECT_FALSE(needsControlGroup(RequestId::kSync));
  EXPECT_TRUE(parseNoArgs(RequestId::kSync, json::object()).has_value());
  EXPECT_FALSE(parseNoArgs(RequestId::kSync, json{{"node", "d1"}}).has_value());
}

TEST(ProtocolTest, IpvsIsReadOnlyLikeStatus) {
  EXPECT_FALSE(needsControlGroup(RequestId::kIpvs));
  EXPECT_FALSE(needsControlGroup(RequestId::kStatus));
  EXPECT_TRUE(needsControlGroup(RequestId::kReload));
}

TEST(ProtocolTest, IpvsTakesNoFields) {
  EXPECT_TRUE(parseNoArgs(RequestId::kIpvs, json::object()).has_value());
  auto r = parseNoArgs(RequestId::kIpvs, json{{"verbose", true}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "unknown field \"verbose\" in the ipvs request; it takes no fields");
}

TEST(ProtocolTest, EachRequestIsDeclaredOnceWithANameACommandAndItsAccess) {
  std::set<std::string_view> names;
  std::set<std::string_view> commands;
  int32_t wire = 0;
  for (const RequestDecl& d : requestDecls()) {
    ++wire;
    EXPECT_EQ(requestIdFromWire(wire), d.id) << d.name;
    EXPECT_EQ(&declarationOf(d.id), &d) << d.name;
    EXPECT_TRUE(names.insert(d.name).second) << "two requests named " << d.name;
    EXPECT_TRUE(commands.insert(d.cli).second) << "two requests sent by tandem " << d.cli;
    EXPECT_FALSE(d.help.empty()) << d.name;
    if (d.changes) {
      EXPECT_EQ(d.access, Access::kControlGroup) << d.name << " changes the cluster";
    }
  }
  EXPECT_EQ(requestIdFromWire(wire + 1), std::nullopt);
  EXPECT_EQ(requestIdFromWire(0), std::nullopt);
}

TEST(ProtocolTest, AnUnknownIdNamesEveryRequestThisTandemdKnows) {
  std::string e = decodeError(request(15, "{}"));
  EXPECT_NE(e.find("1 to 14"), std::string::npos) << e;
  EXPECT_NE(e.find("config-show, history, explain, drains"), std::string::npos) << e;
}

TEST(ProtocolTest, DrainIsAChangeWithAServiceAServerAndOn) {
  EXPECT_TRUE(needsControlGroup(RequestId::kDrain));
  EXPECT_FALSE(needsControlGroup(RequestId::kDrains));
  EXPECT_EQ(requestName(RequestId::kDrains), "drains");
  EXPECT_EQ(requestIdFromWire(14), RequestId::kDrains);
  DrainArgs args{"web", "203.0.113.10:80", true};
  auto back = parseDrainArgs(drainBody(args));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->service, "web");
  EXPECT_EQ(back->server, "203.0.113.10:80");
  EXPECT_TRUE(back->on);
  EXPECT_EQ(parseDrainArgs(json{{"service", "web"}, {"on", true}}).error().message,
            "the drain request needs \"server\": a real server (ADDR:PORT or ADDR), as a string "
            "of 1 to 128 bytes");
  EXPECT_FALSE(parseDrainArgs(json{{"service", "web"}, {"server", "a"}, {"on", 1}}).has_value());
  EXPECT_FALSE(
      parseDrainArgs(json{{"service", std::string(129, 'w')}, {"server", "a"}, {"on", true}})
          .has_value());
  EXPECT_FALSE(parseDrainArgs(json{{"service", "w"}, {"server", "a"}, {"on", true}, {"wait", true}})
                   .has_value());
}

TEST(ProtocolTest, TheConfigRequestsAreTenAndElevenNeedAdminAndTakeNoFields) {
  EXPECT_EQ(requestIdFromWire(10), RequestId::kConfigDiff);
  EXPECT_EQ(requestIdFromWire(11), RequestId::kConfigShow);
  EXPECT_EQ(requestName(RequestId::kConfigDiff), "config-diff");
  EXPECT_TRUE(needsControlGroup(RequestId::kConfigDiff)) << "it reads the config file as tandemd";
  EXPECT_TRUE(needsControlGroup(RequestId::kConfigShow));
  EXPECT_FALSE(parseNoArgs(RequestId::kConfigShow, json{{"file", "/etc/shadow"}}));
}

TEST(ProtocolTest, HistoryIsTwelveForAdminsWithAnOptionalSince) {
  EXPECT_EQ(requestIdFromWire(12), RequestId::kHistory);
  EXPECT_TRUE(needsControlGroup(RequestId::kHistory)) << "it says who asked what";
  EXPECT_EQ(parseHistoryArgs(json::object()).value(), 0u);
  EXPECT_EQ(parseHistoryArgs(json::parse(R"({"since_ms": 1764770000000})")).value(),
            1764770000000u);
  EXPECT_FALSE(parseHistoryArgs(json{{"since_ms", "1h"}}));
  EXPECT_FALSE(parseHistoryArgs(json{{"since", 5}}));
  EXPECT_EQ(requestIdFromWire(13), RequestId::kExplain);
  EXPECT_FALSE(needsControlGroup(RequestId::kExplain));
}

TEST(ProtocolTest, MaintenanceIsNineAChangeAndNeedsOn) {
  EXPECT_EQ(requestIdFromWire(9), RequestId::kMaintenance);
  EXPECT_EQ(requestName(RequestId::kMaintenance), "maintenance");
  EXPECT_TRUE(needsControlGroup(RequestId::kMaintenance));
  EXPECT_EQ(parseMaintenanceArgs(maintenanceBody({false})).value().on, false);
  EXPECT_EQ(parseMaintenanceArgs(json::object()).error().message,
            "the maintenance request needs \"on\": true to enter maintenance mode, false to "
            "leave it");
  EXPECT_FALSE(parseMaintenanceArgs(json{{"on", "yes"}}));
  EXPECT_FALSE(parseMaintenanceArgs(json{{"on", true}, {"node", "lb1"}}));
}

TEST(ProtocolTest, ALifetimeRoundTripsWithinItsRangeAndIsRefusedOutsideIt) {
  auto moved = parseMoveArgs(moveBody({"lb2", 60000}));
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_EQ(moved->lifetime_ms, 60000u);
  auto standby = parseStandbyArgs(standbyBody({"lb1", true, kMaxLifetimeMs}));
  ASSERT_TRUE(standby) << standby.error().message;
  EXPECT_EQ(standby->lifetime_ms, kMaxLifetimeMs);
  EXPECT_EQ(parseMoveArgs(moveBody({"lb2", std::nullopt})).value().lifetime_ms, std::nullopt);
  for (const json& bad :
       {json(999), json(kMaxLifetimeMs + 1), json(-5), json(1.5), json("1h"), json(nullptr)}) {
    auto r = parseMoveArgs(json{{"target", "lb2"}, {"lifetime_ms", bad}});
    ASSERT_FALSE(r) << bad.dump();
    EXPECT_NE(r.error().message.find("\"lifetime_ms\" in the move request"), std::string::npos)
        << r.error().message;
  }
  auto online = parseStandbyArgs(json{{"node", "lb1"}, {"on", false}, {"lifetime_ms", 5000}});
  ASSERT_FALSE(online);
  EXPECT_EQ(online.error().message,
            "\"lifetime_ms\" in the standby request goes with \"on\": true; leaving standby "
            "takes none");
}

TEST(ProtocolTest, AnUnavailableIpvsAnswerCarriesENOTSUP) {
  auto bytes = encodeResponse(
      7, errorBody(Error{ErrorCode::kUnavailable, "this tandemd runs without IPVS"}));
  ASSERT_TRUE(bytes.has_value());
  int32_t error = 0;
  std::memcpy(&error, bytes->data() + 16, 4);
  EXPECT_EQ(error, -ENOTSUP);
  auto body = decodeResponse(*bytes, 7);
  ASSERT_TRUE(body.has_value());
  auto r = bodyResult(*body);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace tandem::ipc
