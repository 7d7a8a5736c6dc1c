// libFuzzer: any bytes, as root and as an outsider, into AdminService::handle. It must always
// produce a response that decodes, and never crash or throw.
#include <cstdlib>

#include "ipc/admin_service.h"
#include "ipc_fakes.h"

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer's entry point
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tandem::ipc;
  static fakes::FakeUserDb users;
  static fakes::FakeAdminHandler handler;
  static AdminService service(handler, *AccessPolicy::create(users, "tandem-admin"));
  handler.calls.clear();
  std::span<const uint8_t> bytes(data, size);
  for (uid_t uid : {0u, 65534u}) {
    Peer peer{Credentials{uid, uid, 1}, {}};
    Bytes response = service.handle(bytes, peer);
    if (!decodeResponse(response, rawRequestId(bytes))) std::abort();
  }
  return 0;
}
