// The admin request logic without a socket: bytes and a caller in, a response out, for good
// requests, garbage, refusals and a misbehaving handler.
#include "ipc/admin_service.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "ipc_fakes.h"

namespace tandem::ipc {
namespace {

using fakes::FakeAdminHandler;
using fakes::FakeUserDb;
using nlohmann::json;

class AdminServiceTest : public ::testing::Test {
 protected:
  AdminService service() {
    auto policy = AccessPolicy::create(users_, "tandem-admin");
    EXPECT_TRUE(policy.has_value());
    return AdminService(handler_, std::move(*policy),
                        [this](std::string_view line) { audit_.emplace_back(line); });
  }

  // Sends one request and decodes the answer, which must always be a well-formed response.
  json ask(AdminService& s, const Bytes& request, Peer& peer) {
    Bytes response = s.handle(request, peer);
    auto body = decodeResponse(response, rawRequestId(request));
    EXPECT_TRUE(body.has_value()) << body.error().message;
    return body ? *body : json();
  }

  json ask(AdminService& s, RequestId id, const json& body, Peer& peer) {
    auto request = encodeRequest(id, body);
    EXPECT_TRUE(request.has_value());
    return ask(s, *request, peer);
  }

  FakeAdminHandler handler_;
  FakeUserDb users_;
  std::vector<std::string> audit_;
  Peer root_{Credentials{0, 0, 100}, {}};
  Peer nobody_{Credentials{65534, 65534, 200}, {}};
};

TEST_F(AdminServiceTest, StatusAnswersTheHandlersFieldsWithOkTrue) {
  AdminService s = service();
  json body = ask(s, RequestId::kStatus, json::object(), nobody_);
  EXPECT_EQ(body, (json{{"ok", true},
                        {"cluster", "prod"},
                        {"local_node", "lb1"},
                        {"admin_requests", {{"malformed", 0}, {"refused", 0}, {"changes", 0}}}}));
  EXPECT_TRUE(audit_.empty()) << "reading the status is not worth a log line";
}

TEST_F(AdminServiceTest, NonJsonRequestGetsAnErrorAnswerWithItsId) {
  AdminService s = service();
  Bytes garbage(16 + 7);
  int32_t id = 1;
  auto size = static_cast<int32_t>(garbage.size());
  std::memcpy(garbage.data(), &id, 4);
  std::memcpy(garbage.data() + 8, &size, 4);
  std::memcpy(garbage.data() + 16, "garbage", 7);
  json body = ask(s, garbage, nobody_);
  EXPECT_EQ(body["ok"], false);
  EXPECT_EQ(body["code"], "parse");
  EXPECT_EQ(body["error"], "the request body is not valid JSON (syntax error at byte 1)");
  EXPECT_TRUE(handler_.calls.empty());
  ASSERT_EQ(audit_.size(), 1u);
  EXPECT_EQ(audit_[0],
            "malformed admin request uid=65534 pid=200 reason=\"the request body is not valid "
            "JSON (syntax error at byte 1)\"");
}

TEST_F(AdminServiceTest, TooShortRequestGetsAnErrorAnswer) {
  AdminService s = service();
  Bytes response = s.handle(Bytes{1, 2, 3}, nobody_);
  auto body = decodeResponse(response, 0);
  ASSERT_TRUE(body.has_value()) << body.error().message;
  EXPECT_EQ((*body)["ok"], false);
  EXPECT_NE((*body)["error"].get<std::string>().find("truncated request"), std::string::npos);
}

TEST_F(AdminServiceTest, RefusedStandbyNeverReachesTheHandler) {
  AdminService s = service();
  json body = ask(s, RequestId::kStandby, standbyBody({"lb1", true, std::nullopt}), nobody_);
  EXPECT_EQ(body["ok"], false);
  EXPECT_EQ(body["code"], "permission-denied");
  EXPECT_NE(body["error"].get<std::string>().find(
                "permission denied: user uid 65534 (uid 65534) is not root and not in group "
                "tandem-admin"),
            std::string::npos)
      << body["error"];
  EXPECT_TRUE(handler_.calls.empty());
  ASSERT_EQ(audit_.size(), 1u);
  EXPECT_EQ(audit_[0].rfind("admin request refused request=standby uid=65534 pid=200", 0), 0u)
      << audit_[0];
}

TEST_F(AdminServiceTest, AllowedChangeReachesTheHandlerAndIsLoggedWithWhoAskedIt) {
  AdminService s = service();
  handler_.answer = json{{"standby", true}};
  json body = ask(s, RequestId::kStandby, standbyBody({"lb2", true, std::nullopt}), root_);
  EXPECT_EQ(body, (json{{"ok", true}, {"standby", true}}));
  EXPECT_EQ(handler_.calls, std::vector<std::string>{"standby lb2 on"});
  ASSERT_EQ(audit_.size(), 1u);
  EXPECT_EQ(
      audit_[0],
      R"(admin request request=standby uid=0 pid=100 body={"node":"lb2","on":true} result=ok)");
  EXPECT_EQ(handler_.audited_calls,
            std::vector<std::string>{R"(standby uid=0 pid=100 {"node":"lb2","on":true} ok)"})
      << "the history hears of it too";
}

TEST_F(AdminServiceTest, APrivilegedReadIsLoggedButNotCountedOrRecordedAsAChange) {
  AdminService s = service();
  handler_.answer = json{{"text", "x"}};
  ask(s, RequestId::kConfigShow, json::object(), root_);
  ASSERT_EQ(audit_.size(), 1u) << "who read the config is logged";
  EXPECT_EQ(audit_[0].rfind("admin request request=config-show uid=0 pid=100", 0), 0u) << audit_[0];
  EXPECT_TRUE(handler_.audited_calls.empty()) << "a read is no admin action in the history";
  EXPECT_EQ(s.counters().changes, 0u);
}

TEST_F(AdminServiceTest, HistorySaysWhoAskedWhatSoOnlyAdminsReadIt) {
  AdminService s = service();
  json refused = ask(s, RequestId::kHistory, json{{"since_ms", 5}}, nobody_);
  EXPECT_EQ(refused["code"], "permission-denied");
  json body = ask(s, RequestId::kHistory, json{{"since_ms", 5}}, root_);
  EXPECT_EQ(body["code"], "unavailable") << "the fake keeps no history, but root was let in";
}

TEST_F(AdminServiceTest, EachRequestReachesItsHandlerMethod) {
  AdminService s = service();
  ask(s, RequestId::kMove, moveBody({"lb2", std::nullopt}), root_);
  ask(s, RequestId::kClear, json::object(), root_);
  ask(s, RequestId::kReload, json::object(), root_);
  ask(s, RequestId::kStandby, standbyBody({"lb1", false, std::nullopt}), root_);
  EXPECT_EQ(handler_.calls,
            (std::vector<std::string>{"move lb2", "clear", "reload", "standby lb1 off"}));
}

TEST_F(AdminServiceTest, BadArgumentsNeverReachTheHandler) {
  AdminService s = service();
  json body = ask(s, RequestId::kStandby, json{{"node", "lb1"}, {"on", "yes"}}, root_);
  EXPECT_EQ(body["ok"], false);
  EXPECT_EQ(body["code"], "invalid-argument");
  body = ask(s, RequestId::kStatus, json{{"verbose", true}}, root_);
  EXPECT_EQ(body["ok"], false);
  EXPECT_TRUE(handler_.calls.empty());
}

TEST_F(AdminServiceTest, HandlerErrorBecomesOkFalseWithItsCode) {
  AdminService s = service();
  handler_.answer = fail(ErrorCode::kNotFound, "no node \"lb9\" in cluster prod");
  json body = ask(s, RequestId::kMove, moveBody({"lb9", std::nullopt}), root_);
  EXPECT_EQ(
      body,
      (json{{"ok", false}, {"error", "no node \"lb9\" in cluster prod"}, {"code", "not-found"}}));
  ASSERT_EQ(audit_.size(), 1u);
  EXPECT_EQ(audit_[0], R"(admin request request=move uid=0 pid=100 body={"target":"lb9"} )"
                       R"(result="no node "lb9" in cluster prod")");
}

TEST_F(AdminServiceTest, HandlerThatThrowsGetsAnInternalErrorAnswerNotACrash) {
  AdminService s = service();
  handler_.throw_on_status = true;
  json body = ask(s, RequestId::kStatus, json::object(), nobody_);
  EXPECT_EQ(body["ok"], false);
  EXPECT_EQ(body["code"], "internal");
  EXPECT_EQ(body["error"],
            "tandemd failed while answering status: status exploded; see the tandemd log");
}

TEST_F(AdminServiceTest, DrainIsRefusedToOthersAndReachesTheHandlerForRoot) {
  AdminService s = service();
  const json body{{"service", "web"}, {"server", "203.0.113.10:80"}, {"on", true}};
  EXPECT_EQ(ask(s, RequestId::kDrain, body, nobody_)["code"], "permission-denied");
  json bad = ask(s, RequestId::kDrain, json::object(), root_);
  EXPECT_EQ(bad["code"], "invalid-argument");
  // The test handler has no cluster: the default answer, past the parse.
  json answer = ask(s, RequestId::kDrain, body, root_);
  EXPECT_EQ(answer["code"], "unavailable");
  EXPECT_EQ(answer["error"], "this tandemd has no cluster to drain real servers in");
  // drains is a read: anyone may ask.
  EXPECT_EQ(ask(s, RequestId::kDrains, json::object(), nobody_)["code"], "unavailable");
}

TEST_F(AdminServiceTest, AnswerTooLargeForAMessageIsReplacedByAnError) {
  AdminService s = service();
  handler_.status_doc = json{{"blob", std::string(kMaxMessageSize, 'x')}};
  json body = ask(s, RequestId::kStatus, json::object(), nobody_);
  EXPECT_EQ(body["ok"], false);
  EXPECT_NE(body["error"].get<std::string>().find("tandemd could not send its answer"),
            std::string::npos);
}

// --- the channel: size, order of checks, counters, a log that cannot be flooded -----------

TEST_F(AdminServiceTest, ARequestOverFourKibIsRefusedUnread) {
  AdminService s = service();
  auto big = encodeRequest(RequestId::kStatus, json{{"pad", std::string(5000, 'x')}});
  ASSERT_TRUE(big.has_value());
  json body = ask(s, *big, nobody_);
  EXPECT_EQ(body["ok"], false);
  EXPECT_EQ(body["error"],
            "a request of " + std::to_string(big->size()) + " bytes; the largest is 4096");
  EXPECT_TRUE(handler_.calls.empty());
  EXPECT_EQ(s.counters().malformed, 1u);
}

// What an unprivileged user sends for a change is refused from the header alone: its body,
// here not even JSON, is never parsed.
TEST_F(AdminServiceTest, AChangeIsAuthorisedFromTheHeaderBeforeItsBodyIsParsed) {
  AdminService s = service();
  Bytes req(kRequestHeaderSize + 9);
  int32_t id = static_cast<int32_t>(RequestId::kStandby);
  auto size = static_cast<int32_t>(req.size());
  std::memcpy(req.data(), &id, 4);
  std::memcpy(req.data() + 8, &size, 4);
  std::memcpy(req.data() + kRequestHeaderSize, "{not json", 9);
  json body = ask(s, req, nobody_);
  EXPECT_EQ(body["code"], "permission-denied") << body;
  EXPECT_EQ(s.counters().refused, 1u);
  EXPECT_EQ(s.counters().malformed, 0u);
  // root's garbage is parsed, and is garbage
  body = ask(s, req, root_);
  EXPECT_EQ(body["code"], "parse") << body;
  EXPECT_EQ(s.counters().malformed, 1u);
}

TEST_F(AdminServiceTest, TheStatusCarriesTheChannelsCounters) {
  AdminService s = service();
  ask(s, Bytes{1, 2, 3}, nobody_);
  ask(s, RequestId::kMove, moveBody({"lb2", std::nullopt}), nobody_);
  ask(s, RequestId::kMove, moveBody({"lb2", std::nullopt}), root_);
  json body = ask(s, RequestId::kStatus, json::object(), nobody_);
  EXPECT_EQ(body["admin_requests"], (json{{"malformed", 1}, {"refused", 1}, {"changes", 1}}));
}

TEST_F(AdminServiceTest, AFloodOfMalformedRequestsLogsABurstThenOneLinePerWindow) {
  std::chrono::steady_clock::time_point now{};
  auto policy = AccessPolicy::create(users_, "tandem-admin");
  ASSERT_TRUE(policy.has_value());
  AdminService s(
      handler_, std::move(*policy), [this](std::string_view line) { audit_.emplace_back(line); },
      [&now] { return now; });
  for (int i = 0; i < 1000; ++i) ask(s, Bytes{1, 2, 3}, nobody_);
  EXPECT_EQ(audit_.size(), kNoiseLogBurst);
  EXPECT_EQ(s.counters().malformed, 1000u);
  now += kNoiseLogWindow;
  ask(s, Bytes{1, 2, 3}, nobody_);
  ASSERT_EQ(audit_.size(), kNoiseLogBurst + 2);
  EXPECT_EQ(audit_[kNoiseLogBurst],
            "admin channel: 995 more malformed or refused requests were not logged one by one");
  // A change is always logged, however noisy the channel.
  ask(s, RequestId::kClear, json::object(), root_);
  EXPECT_EQ(audit_.back().rfind("admin request request=clear uid=0", 0), 0u) << audit_.back();
}

}  // namespace
}  // namespace tandem::ipc
