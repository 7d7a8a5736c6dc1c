// The `tandem` binary end to end: `tandem check run` probes a real listener on loopback with
// tandemd's own checkers, prints the result in text and JSON with exit 0 (healthy) or 3 (not),
// and refuses bad options with the loader's own words (exit 1), before probing anything.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_harness.h"

namespace {

using nlohmann::json;
using namespace tandem::cli::testing;

// A listening socket on 127.0.0.1, on a port the kernel picks (the kernel completes the
// handshake; nothing needs to accept).
struct Listener {
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), len), 0);
    EXPECT_EQ(::listen(fd, 16), 0);
    EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
    address = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  }
  ~Listener() { ::close(fd); }
  int fd = -1;
  std::string address;
};

TEST(CheckCommand, ATcpCheckOfAListenerIsHealthy) {
  Listener l;
  Outcome o = run({TANDEM_PATH, "check", "run", "--type", "tcp", "--address", l.address});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("tcp " + l.address + ": healthy (connected) in ", 0), 0u) << o.out;
}

TEST(CheckCommand, AClosedPortIsUnhealthyWithExit3AndTheJsonSaysWhy) {
  std::string address;
  {
    Listener gone;
    address = gone.address;
  }
  Outcome o = run({TANDEM_PATH, "--json", "check", "run", "--type", "tcp", "--address", address,
                   "--timeout", "300ms", "--set", "tcp_reset=true"});
  EXPECT_EQ(o.exit_code, 3) << o.err;
  json j = json::parse(o.out);
  EXPECT_EQ(j["healthy"], false);
  EXPECT_EQ(j["reason"], "connection refused");
  EXPECT_EQ(j["type"], "tcp");
  EXPECT_EQ(j["address"], address);
  EXPECT_EQ(j["timeout_ms"], 300);
}

TEST(CheckCommand, AnExecCheckSeesTheRealServerInItsEnvironment) {
  Listener l;
  const std::string port = l.address.substr(l.address.find(':') + 1);
  Outcome ok = run({TANDEM_PATH, "check", "run", "--type", "exec", "--address", l.address,
                    "--command", "test \"$TANDEM_RS_PORT\" = " + port});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  Outcome bad = run({TANDEM_PATH, "check", "run", "--type", "exec", "--address", l.address,
                     "--command", "echo down for maintenance; exit 2"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.out.find("unhealthy (exit 2: down for maintenance)"), std::string::npos) << bad.out;
}

TEST(CheckCommand, BadOptionsAreRefusedInTheLoadersWords) {
  Outcome range = run({TANDEM_PATH, "check", "run", "--type", "tcp", "--address", "127.0.0.1:80",
                       "--set", "fall=0"});
  EXPECT_EQ(range.exit_code, 1);
  EXPECT_NE(range.err.find("virtual_server.check.fall: 0 is out of range"), std::string::npos)
      << range.err;
  Outcome owner = run({TANDEM_PATH, "check", "run", "--type", "tcp", "--address", "127.0.0.1:80",
                       "--set", "path=/healthz"});
  EXPECT_EQ(owner.exit_code, 1);
  EXPECT_NE(owner.err.find("path"), std::string::npos) << owner.err;
  Outcome address = run({TANDEM_PATH, "check", "run", "--type", "tcp", "--address", "nowhere"});
  EXPECT_EQ(address.exit_code, 1);
  EXPECT_NE(address.err.find("is not ADDRESS:PORT"), std::string::npos) << address.err;
  Outcome usage = run({TANDEM_PATH, "check", "run", "--address", "127.0.0.1:80"});
  EXPECT_EQ(usage.exit_code, 2) << "--type is required";
}

}  // namespace
