#include "health/linux_checkers.h"

#include "health/dns_checker.h"
#include "health/exec_checker.h"
#include "health/http_checker.h"
#include "health/smtp_checker.h"
#include "health/tcp_checker.h"
#include "health/udp_checker.h"

namespace tandem::resources::health {

std::unique_ptr<Checker> makeLinuxChecker(config::CheckType type, loop::Dispatcher& dispatcher,
                                          process::ChildRunner& children) {
  switch (type) {
    case config::CheckType::kTcp:
      return std::make_unique<TcpChecker>(dispatcher);
    case config::CheckType::kExec:
      return std::make_unique<ExecChecker>(dispatcher, children);
    case config::CheckType::kHttp:
    case config::CheckType::kHttps:
      return std::make_unique<HttpChecker>(dispatcher);
    case config::CheckType::kUdp:
      return std::make_unique<UdpChecker>(dispatcher);
    case config::CheckType::kSmtp:
      return std::make_unique<SmtpChecker>(dispatcher);
    case config::CheckType::kDns:
      return std::make_unique<DnsChecker>(dispatcher);
    default:
      return nullptr;
  }
}

}  // namespace tandem::resources::health
