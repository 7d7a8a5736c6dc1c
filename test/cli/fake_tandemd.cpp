// A stand-in tandemd for testing the `tandem` binary end to end: the real IpcServer on the
// real QbDispatcher, answering status with a canned document.
//
//   fake_tandemd IPC_NAME STATUS_JSON_FILE
//
// Prints "ready" on stdout once it serves, and exits 0 on SIGTERM.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ipc/ipc_server.h"
#include "ipc/posix_user_db.h"
#include "loop/qb_dispatcher.h"

namespace {

using namespace tandem;
using nlohmann::json;

class CannedHandler final : public ipc::AdminHandler {
 public:
  explicit CannedHandler(json status) : status_(std::move(status)) {}
  json status() override { return status_; }
  Result<json> standby(const std::string&, bool) override { return refuse(); }
  Result<json> move(const std::string&) override { return refuse(); }
  Result<json> clear() override { return refuse(); }
  Result<json> reload() override { return refuse(); }

 private:
  static Result<json> refuse() {
    return fail(ErrorCode::kUnavailable, "fake_tandemd only answers status");
  }
  json status_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: fake_tandemd IPC_NAME STATUS_JSON_FILE\n";
    return 2;
  }
  std::ifstream in(argv[2]);
  std::stringstream text;
  text << in.rdbuf();
  json status = json::parse(text.str(), nullptr, false);
  if (!in || status.is_discarded()) {
    std::cerr << "fake_tandemd: cannot read " << argv[2] << "\n";
    return 1;
  }
  status.erase("ok");  // the server adds it

  auto dispatcher = loop::QbDispatcher::create();
  if (!dispatcher) {
    std::cerr << "fake_tandemd: " << dispatcher.error().message << "\n";
    return 1;
  }
  CannedHandler handler(std::move(status));
  ipc::PosixUserDb users;
  auto server = ipc::IpcServer::create(**dispatcher, handler, users,
                                       ipc::IpcServerOptions{argv[1], "root", {}});
  if (!server) {
    std::cerr << "fake_tandemd: " << server.error().message << "\n";
    return 1;
  }
  auto term = (*dispatcher)->onSignal(loop::Signal::kTerminate, [&] { (*dispatcher)->stop(); });
  if (!term) return 1;
  std::cout << "ready" << std::endl;
  (*dispatcher)->run();
  return 0;
}
