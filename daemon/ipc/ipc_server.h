#pragma once

#include <qb/qbipcs.h>

#include <memory>
#include <string>

#include "common/result.h"
#include "ipc/access.h"
#include "ipc/admin_handler.h"
#include "ipc/admin_service.h"
#include "ipc/connection_budget.h"
#include "ipc/qb_poll_adapter.h"
#include "loop/dispatcher.h"

namespace tandem::ipc {

struct IpcServerOptions {
  std::string name{kDefaultIpcName};  // [control] ipc_name
  std::string group = "root";         // [control] group: may change state besides root
  AuditLog audit;                     // refused, malformed and state-changing requests
  AuthLimits auth;                    // half-open connections (see QbPollAdapter)
};

// tandemd's end of the admin channel: a libqb IPC service (QB_IPC_SOCKET: abstract unix
// sockets, so one per network namespace, plus a small control file in /dev/shm) driven by the
// daemon's Dispatcher through QbPollAdapter. It only moves bytes; AdminService decides.
//
// The name stays abstract (libqb's file-system sockets are a host-wide switch that would move
// corosync's too), so anyone may bind it first. Both ends defend: tandemd, finding the name
// taken, fails at once naming the holder's pid (socket_holders.h); the client talks only to a
// listener owned by root or by its own user (SO_PEERCRED, tools/tandem/ipc_client.cpp).
//
// One per process (see QbPollAdapter). Destroy it before the Dispatcher.
class IpcServer {
 public:
  // Resolves the group, publishes the socket and starts serving on the dispatcher. Fails when
  // the group does not exist or the name is taken (another tandemd in this namespace).
  [[nodiscard]] static Result<std::unique_ptr<IpcServer>> create(loop::Dispatcher& dispatcher,
                                                                 AdminHandler& handler,
                                                                 const UserDb& users,
                                                                 IpcServerOptions options);
  ~IpcServer();
  IpcServer(const IpcServer&) = delete;
  IpcServer& operator=(const IpcServer&) = delete;

  const std::string& name() const { return name_; }
  // A reload changed [control] group: resolved now; a missing group changes nothing.
  [[nodiscard]] Result<void> setGroup(const std::string& group);
  size_t connections() const { return budget_.open(); }
  const AdminCounters& counters() const { return service_.counters(); }

  // Concurrent admin connections: each holds a few fds, a /dev/shm file and a 1 MiB buffer,
  // and any local user may connect. One user holds at most 8 (root: no limit of its own), and
  // the last 8 of the 64 are kept for root and the admin group (ConnectionBudget).
  static constexpr ConnectionLimits kLimits{64, 8, 8};
  static constexpr size_t kMaxConnections = kLimits.total;

 private:
  IpcServer(std::unique_ptr<QbPollAdapter> adapter, std::unique_ptr<CachedUserDb> users,
            AdminService service, std::string name);

  static int32_t onAccept(qb_ipcs_connection_t* c, uid_t uid, gid_t gid);
  static void onCreated(qb_ipcs_connection_t* c);
  static int32_t onMessage(qb_ipcs_connection_t* c, void* data, size_t size);
  static int32_t onClosed(qb_ipcs_connection_t* c);
  static void onDestroyed(qb_ipcs_connection_t* c);
  void send(qb_ipcs_connection_t* c, const Bytes& response, const Peer& peer);

  // Declared first so that it is destroyed last: tearing the service down calls dispatch_del.
  std::unique_ptr<QbPollAdapter> adapter_;
  std::unique_ptr<CachedUserDb> users_;  // before the policy that points into it
  AdminService service_;
  std::string name_;
  qb_ipcs_service_t* service_handle_ = nullptr;
  ConnectionBudget budget_{kLimits};
};

}  // namespace tandem::ipc
