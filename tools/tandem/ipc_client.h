#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/duration.h"
#include "common/result.h"
#include "ipc/protocol.h"

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's name
class App;
}  // namespace CLI

// `tandem`'s end of the admin channel: one request to tandemd over libqb IPC, one answer.
namespace tandem::cli {

struct IpcOptions {
  std::string name{ipc::kDefaultIpcName};  // tandemd's [control] ipc_name
  Millis timeout{5000};                    // connecting and answering together
};

// Adds --ipc-name to a command that talks to tandemd, so every such command spells it alike.
void addIpcOptions(CLI::App& command, IpcOptions& options);

// Connects, sends one request and waits for its answer. The value is the response body as
// tandemd sent it, which may be {"ok": false, ...}: that is an answer, and the caller renders
// it. Fails when there is no answer: tandemd unreachable (with a hint that names the ipc name
// and the network namespace), refused, silent past the timeout, or garbled.
[[nodiscard]] Result<nlohmann::json> callDaemon(const IpcOptions& options, ipc::RequestId id,
                                                const nlohmann::json& body);

}  // namespace tandem::cli
