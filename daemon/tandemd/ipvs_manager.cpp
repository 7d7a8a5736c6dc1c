#include "tandemd/ipvs_manager.h"

#include <utility>

#include "tandemd/ipvs_json.h"

namespace tandem::tandemd {

namespace {

LogLevel levelOf(resources::ipvs::IpvsLogLevel l) {
  using L = resources::ipvs::IpvsLogLevel;
  switch (l) {
    case L::kError:
      return LogLevel::kError;
    case L::kWarning:
      return LogLevel::kWarning;
    case L::kNotice:
      return LogLevel::kNotice;
    case L::kInfo:
      return LogLevel::kInfo;
  }
  return LogLevel::kInfo;
}

}  // namespace

IpvsManager::IpvsManager(loop::Dispatcher& dispatcher, Logger& logger, OpenIpvsKernel open,
                         OpenOwnedStore open_owned)
    : dispatcher_(dispatcher),
      logger_(logger),
      open_(std::move(open)),
      open_owned_(std::move(open_owned)) {}

IpvsManager::~IpvsManager() {
  if (loop_) loop_->stop();
}

void IpvsManager::configure(const config::Config& cfg) {
  config_ = cfg;
  if (loop_) {
    // Also when the reload dropped every service: the loop removes the ones tandem added.
    loop_->configure(*config_);
    return;
  }
  if (config_->virtual_servers.empty()) {
    if (retry_) retry_->cancel();
    return;
  }
  tryOpen();
}

void IpvsManager::tryOpen() {
  if (loop_ || !config_ || config_->virtual_servers.empty()) return;
  auto kernel = open_ ? open_()
                      : Result<std::unique_ptr<resources::ipvs::Kernel>>(
                            fail(ErrorCode::kUnavailable, "no IPVS backend"));
  const std::string every = formatDuration(config_->ipvs.monitor_interval);
  if (!kernel) {
    if (kernel.error().message != open_error_) {
      open_error_ = kernel.error().message;
      logger_.log(LogLevel::kError, "IPVS is not available: " + open_error_ +
                                        "; the cluster and the VIPs run without the " +
                                        std::to_string(config_->virtual_servers.size()) +
                                        " virtual server(s), trying again every " + every);
    }
    if (!retry_) retry_ = dispatcher_.createTimer([this] { tryOpen(); });
    retry_->arm(config_->ipvs.monitor_interval);
    return;
  }
  if (retry_) retry_->cancel();
  const bool recovered = !open_error_.empty();
  open_error_.clear();
  kernel_ = std::move(*kernel);
  if (open_owned_) owned_store_ = open_owned_(config_->daemon.state_dir);
  loop_ = std::make_unique<resources::ipvs::IpvsReconcileLoop>(
      dispatcher_, *kernel_,
      [this](resources::ipvs::IpvsLogLevel l, const std::string& line) {
        logger_.log(levelOf(l), line);
      },
      owned_store_.get());
  logger_.log(LogLevel::kNotice,
              std::string(recovered ? "IPVS is available now; " : "") +
                  "keeping the IPVS table on this director whatever its role services=" +
                  std::to_string(config_->virtual_servers.size()) + " monitor_interval=" + every);
  loop_->configure(*config_);
}

Result<nlohmann::json> IpvsManager::show() {
  if (!loop_) {
    if (!open_error_.empty()) {
      return fail(ErrorCode::kUnavailable,
                  "IPVS is not available on this director: " + open_error_ +
                      " (tandemd tries again every " +
                      formatDuration(config_->ipvs.monitor_interval) + ")");
    }
    return fail(ErrorCode::kUnavailable,
                "tandemd manages no IPVS services: the config has no [[virtual_server]]");
  }
  auto table = kernel_->dump();
  if (!table) {
    return fail(table.error().code, "cannot read the IPVS table: " + table.error().message);
  }
  return ipvsJson(*table, *config_, IpvsView{loop_->lastPassOk(), config_->ipvs.monitor_interval});
}

}  // namespace tandem::tandemd
