#include "ipc/ipc_server.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <span>

#include "ipc/socket_holders.h"

namespace tandem::ipc {

namespace {

constexpr size_t kMaxNameLength = 64;  // libqb derives socket and /dev/shm names from it

IpcServer* serverOf(qb_ipcs_connection_t* c) {
  return static_cast<IpcServer*>(qb_ipcs_connection_service_context_get(c));
}

Peer* peerOf(qb_ipcs_connection_t* c) { return static_cast<Peer*>(qb_ipcs_context_get(c)); }

}  // namespace

Result<std::unique_ptr<IpcServer>> IpcServer::create(loop::Dispatcher& dispatcher,
                                                     AdminHandler& handler, const UserDb& users,
                                                     IpcServerOptions options) {
  if (options.name.empty() || options.name.size() > kMaxNameLength ||
      options.name.find('/') != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument, "ipc name \"" + options.name + "\" must be 1 to " +
                                                 std::to_string(kMaxNameLength) +
                                                 " characters without '/'");
  }
  auto clock = [&dispatcher] { return dispatcher.now(); };
  auto cached = std::make_unique<CachedUserDb>(users, clock);
  auto policy = AccessPolicy::create(*cached, options.group);
  if (!policy) return fail(policy.error());
  auto adapter = QbPollAdapter::create(dispatcher, options.auth);
  if (!adapter) return fail(adapter.error());

  std::unique_ptr<IpcServer> server(new IpcServer(
      std::move(*adapter), std::move(cached),
      AdminService(handler, std::move(*policy), std::move(options.audit), clock), options.name));
  IpcServer* self = server.get();
  server->adapter_->onForeign([self](uid_t from, uid_t owner) {
    self->service_.auditNoise(
        "admin request dropped: a datagram from uid=" +
        (from == static_cast<uid_t>(-1) ? std::string("unknown") : std::to_string(from)) +
        " to the request socket of uid=" + std::to_string(owner) +
        "'s connection (another local user writing into it)");
  });

  qb_ipcs_service_handlers handlers{};
  handlers.connection_accept = &IpcServer::onAccept;
  handlers.connection_created = &IpcServer::onCreated;
  handlers.msg_process = &IpcServer::onMessage;
  handlers.connection_closed = &IpcServer::onClosed;
  handlers.connection_destroyed = &IpcServer::onDestroyed;
  // Sockets rather than shared-memory rings: no 3 MiB of /dev/shm per `tandem status`, and a
  // datagram is exactly one message, which keeps a malformed one from spilling into the next.
  qb_ipcs_service_t* s = qb_ipcs_create(server->name_.c_str(), 0, QB_IPC_SOCKET, &handlers);
  if (s == nullptr) {
    return fail(ErrorCode::kInternal, "cannot create the admin IPC service \"" + server->name_ +
                                          "\" (qb_ipcs_create failed)");
  }
  qb_ipcs_service_context_set(s, server.get());
  qb_ipcs_poll_handlers poll = server->adapter_->handlers();
  qb_ipcs_poll_handlers_set(s, &poll);
  // Every client gets buffers for the largest message, however small it asked for.
  qb_ipcs_enforce_buffer_size(s, static_cast<uint32_t>(kMaxMessageSize));
  if (int32_t rc = qb_ipcs_run(s); rc < 0) {
    // qb_ipcs_run has already destroyed the service.
    Error e = errnoError(-rc, "cannot publish the admin socket \"" + server->name_ + "\"");
    if (rc == -EADDRINUSE) {
      // The name is abstract, so anyone may have bound it first: say who, so the operator can
      // tell a second tandemd from a squatter without hunting.
      std::string holders = describeHolders(abstractSocketHolders(server->name_));
      if (holders.empty()) {
        e.message += "; is another tandemd running in this network namespace? (`ss -xlp | grep @" +
                     server->name_ + "` names the holder)";
      } else {
        e.message += "; it is held by " + holders +
                     ": stop that process (or set [control] ipc_name), then start tandemd again";
      }
    }
    return fail(std::move(e));
  }
  server->service_handle_ = s;
  server->adapter_->markListeners();  // the listening socket: what it accepts must authenticate
  return server;
}

IpcServer::IpcServer(std::unique_ptr<QbPollAdapter> adapter, std::unique_ptr<CachedUserDb> users,
                     AdminService service, std::string name)
    : adapter_(std::move(adapter)),
      users_(std::move(users)),
      service_(std::move(service)),
      name_(std::move(name)) {}

Result<void> IpcServer::setGroup(const std::string& group) {
  auto policy = AccessPolicy::create(*users_, group);
  if (!policy) return fail(policy.error());
  service_.setPolicy(std::move(*policy));
  return {};
}

IpcServer::~IpcServer() {
  // Disconnects every client (each one's context is freed in onDestroyed) and closes the
  // listening socket, both through the adapter, which is still alive here.
  if (service_handle_ == nullptr) return;
  // Should libqb keep the service alive (a client half-way through its handshake holds a
  // reference), its late callbacks find no server instead of a dangling one.
  qb_ipcs_service_context_set(service_handle_, nullptr);
  qb_ipcs_destroy(service_handle_);
}

int32_t IpcServer::onAccept(qb_ipcs_connection_t* c, uid_t uid, gid_t gid) {
  IpcServer* self = serverOf(c);
  if (self == nullptr) return -EINVAL;
  // Every local user may connect (status is public), within the budget; what they may ask is
  // decided per request.
  const bool privileged = self->service_.policy().privileged(uid, gid);
  if (auto why = self->budget_.admit(uid, privileged)) {
    self->service_.auditNoise("admin connection refused uid=" + std::to_string(uid) + " reason=\"" +
                              *why + "\"");
    return -EAGAIN;
  }
  qb_ipcs_context_set(c, new Peer{Credentials{uid, gid, 0}, std::nullopt});
  return 0;
}

void IpcServer::onCreated(qb_ipcs_connection_t* c) {
  Peer* peer = peerOf(c);
  if (peer == nullptr) return;
  // The pid is only for log lines; the credentials came with the connection.
  if (qb_ipcs_connection_stats_2* stats = qb_ipcs_connection_stats_get_2(c, 0)) {
    peer->credentials.pid = stats->client_pid;
    std::free(stats);
  }
}

int32_t IpcServer::onMessage(qb_ipcs_connection_t* c, void* data, size_t size) {
  IpcServer* self = serverOf(c);
  Peer* peer = peerOf(c);
  if (self == nullptr || peer == nullptr || data == nullptr) return 0;
  // libqb passes the size the header claims, not what arrived; never read past the buffer it
  // received into. A lie within the buffer is caught by the decoder (size or JSON mismatch).
  int32_t buffer = qb_ipcs_connection_get_buffer_size(c);
  size_t readable = std::min(size, buffer > 0 ? static_cast<size_t>(buffer) : 0);
  std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data), readable);
  self->send(c, self->service_.handle(bytes, *peer), *peer);
  return 0;  // non-zero asks libqb to back off, which a bad request does not warrant
}

void IpcServer::send(qb_ipcs_connection_t* c, const Bytes& response, const Peer& peer) {
  ssize_t rc = qb_ipcs_response_send(c, response.data(), response.size());
  if (rc == static_cast<ssize_t>(response.size())) return;
  const std::string who = "uid=" + std::to_string(peer.credentials.uid) +
                          " pid=" + std::to_string(peer.credentials.pid);
  if (rc == -EMSGSIZE) {
    // One datagram per message: the kernel caps it at net.core.wmem_max.
    auto small =
        encodeResponse(rawRequestId(response),
                       errorBody(Error{ErrorCode::kInternal,
                                       "the answer (" + std::to_string(response.size()) +
                                           " bytes) exceeds this host's datagram limit; raise "
                                           "net.core.wmem_max"}));
    if (small) rc = qb_ipcs_response_send(c, small->data(), small->size());
  }
  if (rc < 0) {
    service_.audit("admin response lost " + who + " error=\"" +
                   std::string(std::strerror(static_cast<int>(-rc))) + "\"");
  }
}

int32_t IpcServer::onClosed(qb_ipcs_connection_t* /*c*/) { return 0; }

void IpcServer::onDestroyed(qb_ipcs_connection_t* c) {
  Peer* peer = peerOf(c);
  if (peer == nullptr) return;  // refused in onAccept: nothing was counted or allocated
  qb_ipcs_context_set(c, nullptr);
  if (IpcServer* self = serverOf(c)) self->budget_.release(peer->credentials.uid);
  delete peer;
}

}  // namespace tandem::ipc
