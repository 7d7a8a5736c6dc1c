// A stand-in tandemd for testing the `tandem` binary end to end: the real IpcServer on the
// real QbDispatcher, answering status with a canned document and the changes as tandemd does
// (a move to a configured node, standby of this node only, clear), without doing anything.
//
//   fake_tandemd IPC_NAME STATUS_JSON_FILE [REQUEST_LOG]
//
// Prints "ready" on stdout once it serves, and exits 0 on SIGTERM. With REQUEST_LOG, appends a
// line per change request ("move target=lb2"), so a test can tell what reached the daemon.
// A top-level "ipvs" object in the file is the canned ipvs answer (and not part of the status);
// without one, ipvs is answered as by a tandemd that keeps no IPVS table.
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
  CannedHandler(json status, std::string log) : status_(std::move(status)), log_(std::move(log)) {
    if (auto it = status_.find("ipvs"); it != status_.end()) {
      ipvs_ = *it;
      status_.erase(it);
    }
  }
  json status() override { return status_; }
  Result<json> ipvs() override {
    if (ipvs_.is_null()) {
      return fail(ErrorCode::kUnavailable,
                  "tandemd manages no IPVS services: the config has no [[virtual_server]]");
    }
    return ipvs_;
  }
  Result<json> standby(const ipc::StandbyArgs& args) override {
    const std::string& node = args.node;
    record("standby node=" + node + " on=" + (args.on ? "true" : "false") +
           lifetime(args.lifetime_ms));
    std::string self = status_.value("local_node", "");
    if (!node.empty() && node != self) {
      return fail(ErrorCode::kInvalidArgument,
                  "this is " + self + "; put " + node + " in standby on " + node + " itself");
    }
    json answer{{"node", self}, {"standby", args.on}};
    if (args.lifetime_ms) answer["lifetime_ms"] = *args.lifetime_ms;
    return answer;
  }
  Result<json> move(const ipc::MoveArgs& args) override {
    record("move target=" + args.target + lifetime(args.lifetime_ms));
    json answer{{"target", args.target}};
    if (args.lifetime_ms) answer["lifetime_ms"] = *args.lifetime_ms;
    return answer;
  }
  Result<json> maintenance(bool on) override {
    record(std::string("maintenance on=") + (on ? "true" : "false"));
    return json{{"maintenance", on}};
  }
  Result<json> clear() override {
    record("clear");
    return json{{"cleared", true}};
  }
  Result<json> reload() override {
    return fail(ErrorCode::kUnavailable, "fake_tandemd does not reload");
  }

 private:
  static std::string lifetime(const std::optional<uint64_t>& ms) {
    return ms ? " lifetime_ms=" + std::to_string(*ms) : "";
  }
  void record(const std::string& line) const {
    if (!log_.empty()) std::ofstream(log_, std::ios::app) << line << "\n";
  }
  json status_;
  json ipvs_;
  std::string log_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: fake_tandemd IPC_NAME STATUS_JSON_FILE [REQUEST_LOG]\n";
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
  CannedHandler handler(std::move(status), argc == 4 ? argv[3] : "");
  ipc::PosixUserDb users;
  auto server = ipc::IpcServer::create(**dispatcher, handler, users,
                                       ipc::IpcServerOptions{argv[1], "root", {}, {}});
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
