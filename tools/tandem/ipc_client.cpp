#include "ipc_client.h"

#include <poll.h>
#include <qb/qbipcc.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "common/text.h"

namespace tandem::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Disconnect {
  void operator()(qb_ipcc_connection_t* c) const { qb_ipcc_disconnect(c); }
};
using Connection = std::unique_ptr<qb_ipcc_connection_t, Disconnect>;

Error unreachable(const IpcOptions& o, int err) {
  if (err == ECONNREFUSED || err == ENOENT) {
    // The abstract socket does not exist here: no tandemd, another ipc_name, or another
    // network namespace (abstract sockets are per namespace).
    return Error{ErrorCode::kUnavailable, "cannot reach tandemd (ipc name " + quote(o.name) +
                                              "): is tandemd running in this network "
                                              "namespace?"};
  }
  return Error{ErrorCode::kUnavailable,
               "cannot reach tandemd (ipc name " + quote(o.name) + "): " + std::strerror(err)};
}

Error timedOut(const IpcOptions& o, std::string_view stage) {
  return Error{ErrorCode::kTimeout, "tandemd (ipc name " + quote(o.name) + ") " +
                                        std::string(stage) + " within " +
                                        std::to_string(o.timeout.count()) +
                                        " ms; it may be hung or overloaded: "
                                        "check `systemctl status tandemd`"};
}

int32_t remainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int32_t>(left.count()) : 0;
}

// An abstract socket name is anyone's to bind, so the listener must prove who it is before a
// request goes out: root (tandemd), or this user's own process (a daemon the user started, which
// can do nothing to the user that the user cannot). SO_PEERCRED on the connected setup socket
// holds the listener's credentials, taken by the kernel when it listened: they cannot be faked.
Result<void> trustedServer(int fd, const IpcOptions& o) {
  ucred peer{};
  socklen_t len = sizeof peer;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    return fail(errnoError(errno, "reading the credentials of tandemd's admin socket"));
  }
  if (peer.uid == 0 || peer.uid == ::geteuid()) return {};
  return fail(ErrorCode::kPermissionDenied,
              "the admin socket (ipc name " + quote(o.name) + ") is held by pid " +
                  std::to_string(peer.pid) + ", uid " + std::to_string(peer.uid) +
                  ", not by root: that is not tandemd, so tandem sends it nothing; find it with "
                  "`ss -xlp | grep @" +
                  o.name + "`, stop it, and restart tandemd");
}

// Waits for the server's half of the handshake, so a daemon that accepts and never answers
// costs the timeout, not forever (qb_ipcc_connect would block without limit).
Result<void> awaitHandshake(int fd, const IpcOptions& o, Clock::time_point deadline) {
  while (true) {
    pollfd pfd{fd, POLLIN, 0};
    int rc = ::poll(&pfd, 1, remainingMs(deadline));
    if (rc > 0) return {};
    if (rc == 0) return fail(timedOut(o, "accepted the connection but did not answer it"));
    if (errno != EINTR) return fail(errnoError(errno, "waiting for tandemd"));
  }
}

Result<Connection> connect(const IpcOptions& o, Clock::time_point deadline) {
  int connect_fd = -1;
  errno = 0;
  qb_ipcc_connection_t* raw =
      qb_ipcc_connect_async(o.name.c_str(), ipc::kMaxMessageSize, &connect_fd);
  if (raw == nullptr) return fail(unreachable(o, errno != 0 ? errno : ECONNREFUSED));
  if (auto trusted = trustedServer(connect_fd, o); !trusted) {
    ::close(connect_fd);
    qb_ipcc_disconnect(raw);
    return fail(trusted.error());
  }
  if (auto ready = awaitHandshake(connect_fd, o, deadline); !ready) {
    // Half-connected: libqb's disconnect frees the handle but not the setup socket.
    ::close(connect_fd);
    qb_ipcc_disconnect(raw);
    return fail(ready.error());
  }
  // On failure this frees the handle and closes the socket itself.
  if (int32_t rc = qb_ipcc_connect_continue(raw); rc < 0) {
    if (rc == -EACCES) {
      return fail(ErrorCode::kPermissionDenied,
                  "tandemd (ipc name " + quote(o.name) + ") refused the connection");
    }
    if (rc == -EAGAIN) {
      return fail(ErrorCode::kTryAgain, "tandemd (ipc name " + quote(o.name) +
                                            ") has too many admin connections open; try again");
    }
    return fail(unreachable(o, -rc));
  }
  return Connection(raw);
}

}  // namespace

void addIpcOptions(CLI::App& command, IpcOptions& options) {
  command.add_option("--ipc-name", options.name, "tandemd's [control] ipc_name")
      ->capture_default_str();
}

Result<nlohmann::json> callDaemon(const IpcOptions& o, ipc::RequestId id,
                                  const nlohmann::json& body) {
  auto request = ipc::encodeRequest(id, body);
  if (!request) return fail(request.error());
  const Clock::time_point deadline = Clock::now() + o.timeout;

  auto connection = connect(o, deadline);
  if (!connection) return fail(connection.error());
  qb_ipcc_connection_t* c = connection->get();

  ssize_t sent = qb_ipcc_send(c, request->data(), request->size());
  // The request socket's queue may be full: with libqb's socket transport anyone may send it
  // datagrams, which tandemd drops as fast as they come (QbPollAdapter::dropForeign). Try again
  // until the deadline rather than fail the operator's command.
  while (sent == -EAGAIN && remainingMs(deadline) > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    sent = qb_ipcc_send(c, request->data(), request->size());
  }
  if (sent < 0) {
    return fail(
        errnoError(static_cast<int>(-sent),
                   "sending the " + std::string(ipc::requestName(id)) + " request to tandemd"));
  }
  std::vector<uint8_t> buffer(ipc::kMaxMessageSize);
  while (true) {
    int32_t wait = remainingMs(deadline);
    if (wait == 0) return fail(timedOut(o, "did not answer"));
    ssize_t n = qb_ipcc_recv(c, buffer.data(), buffer.size(), wait);
    if (n == -EAGAIN || n == -ETIMEDOUT || n == -EINTR) continue;
    if (n == -ENOTCONN || n == -ECONNRESET || n == -EPIPE || n == -ESHUTDOWN) {
      return fail(ErrorCode::kUnavailable,
                  "tandemd (ipc name " + quote(o.name) +
                      ") closed the connection without answering; see its log");
    }
    if (n < 0) return fail(errnoError(static_cast<int>(-n), "reading tandemd's answer"));
    auto answer = ipc::decodeResponse(
        std::span<const uint8_t>(buffer.data(), static_cast<size_t>(n)), static_cast<int32_t>(id));
    if (!answer) {
      return fail(ErrorCode::kParse, "tandemd sent an answer tandem cannot read (" +
                                         answer.error().message +
                                         "); are tandem and tandemd the same version?");
    }
    return std::move(*answer);
  }
}

}  // namespace tandem::cli
