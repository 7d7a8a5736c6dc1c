// A hostile local user's request flood against tandemd's admin channel, for lab_admin_hostile
// (issue 13): a test tool, never installed. Run as an unprivileged user, it connects over libqb
// IPC like `tandem` and, until the file --until names exists (the test has what it needs) or
// --seconds have passed, sends what the protocol must refuse without harm: bodies far over the
// 4 KiB cap, JSON that does not parse, unknown request ids, a body with a NUL, and changes it may
// not make. Each connection carries a few; new ones are opened all along. Prints "flood sent=N
// answered=M connections=C" at the end.
// With --hold S (run as root), it is the victim of the injection race instead: it connects,
// waits S seconds with the connection open and silent (its request socket open to anyone who
// finds it), then asks for the status and prints "hold answered=ID" with the id of the request
// its answer is for: 1 (status) unless an injected request was carried out in its name.
#include <qb/qbipcc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "ipc/protocol.h"

namespace {

using tandem::ipc::RequestId;

// A request with whatever header and body the attacker wants, as libqb frames it.
std::vector<uint8_t> raw(int32_t id, const std::string& body) {
  std::vector<uint8_t> out(tandem::ipc::kRequestHeaderSize + body.size());
  const auto size = static_cast<int32_t>(out.size());
  std::memcpy(out.data(), &id, sizeof id);
  std::memcpy(out.data() + 8, &size, sizeof size);
  std::memcpy(out.data() + tandem::ipc::kRequestHeaderSize, body.data(), body.size());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"admin_flood: malformed and oversized admin requests, for the lab"};
  std::string name = "tandem";
  int seconds = 10;
  app.add_option("--name", name, "the admin channel's name");
  app.add_option("--seconds", seconds, "how long to flood at most");
  std::string until;
  app.add_option("--until", until, "flood until this file exists");
  int hold = 0;
  app.add_option("--hold", hold, "be the victim: hold a silent connection this many seconds");
  CLI11_PARSE(app, argc, argv);

  if (hold > 0) {
    qb_ipcc_connection_t* c = qb_ipcc_connect(name.c_str(), tandem::ipc::kMaxMessageSize);
    if (c == nullptr) {
      std::cout << "hold cannot connect" << std::endl;
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds(hold));
    // As tandem's ipc_client.cpp does it: a full request queue is tried again.
    const auto status = raw(1, "{}");
    ssize_t got = qb_ipcc_send(c, status.data(), status.size());
    for (int i = 0; got == -EAGAIN && i < 1000; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      got = qb_ipcc_send(c, status.data(), status.size());
    }
    std::vector<char> answer(tandem::ipc::kMaxMessageSize);
    if (got >= 0) got = qb_ipcc_recv(c, answer.data(), answer.size(), 5000);
    int32_t id = 0;
    if (got >= 4) std::memcpy(&id, answer.data(), sizeof id);
    qb_ipcc_disconnect(c);
    if (got < 0) {
      std::cout << "hold failed: " << std::strerror(static_cast<int>(-got)) << std::endl;
      return 1;
    }
    std::cout << "hold answered=" << id << std::endl;
    return id == 1 ? 0 : 1;
  }
  const std::vector<std::vector<uint8_t>> kinds = {
      raw(1, "{" + std::string(60000, ' ') + "}"),  // oversized status
      raw(2, R"({"node": "d1", "on": true, "pad": ")" + std::string(20000, 'x') + "\"}"),
      raw(1, "{not json"),                      // malformed
      raw(99, "{}"),                            // unknown id
      raw(1, std::string("{\0}", 3)),           // a NUL in the body
      raw(2, R"({"node": "d1", "on": true})"),  // a change, refused
      raw(3, R"({"target": "d2"})"),
      raw(9, R"({"on": true})"),
  };
  uint64_t sent = 0, answered = 0, connections = 0;
  std::vector<char> reply(tandem::ipc::kMaxMessageSize);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end &&
         (until.empty() || ::access(until.c_str(), F_OK) != 0)) {
    qb_ipcc_connection_t* c = qb_ipcc_connect(name.c_str(), tandem::ipc::kMaxMessageSize);
    if (c == nullptr) continue;  // refused (the per-user budget): try again
    ++connections;
    for (const auto& k : kinds) {
      iovec iov{const_cast<uint8_t*>(k.data()), k.size()};
      ++sent;
      if (qb_ipcc_sendv_recv(c, &iov, 1, reply.data(), reply.size(), 2000) > 0) ++answered;
    }
    qb_ipcc_disconnect(c);
  }
  std::cout << "flood sent=" << sent << " answered=" << answered << " connections=" << connections
            << std::endl;
  return answered > 0 ? 0 : 1;
}
