#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/result.h"
#include "format_status.h"

// How `tandem ipvs show` prints tandemd's ipvs answer (protocol.h). Pure: JSON in, text and an
// exit code out, golden-tested (test/cli/golden/ipvs) without a daemon.
namespace tandem::cli {

// Each service on a line of its own (its name, key, scheduler, flags and totals), then a table
// of its real servers: forwarding, weight, health as tandem sees it, active and inactive
// connections and the kernel's rates. Tolerant: a missing field shows as "?".
std::string formatIpvs(const nlohmann::json& answer);

// 1234 -> "1234", 12345 -> "12.3k", 1234567 -> "1.23M": rates in a narrow column.
std::string formatRate(uint64_t v);

// What `tandem ipvs show` prints for callDaemon's result, with the rules of renderStatus: a
// tandemd without IPVS answers "unavailable", which exits 3 with its message on stderr.
CommandOutput renderIpvs(const Result<nlohmann::json>& answer, bool json);

}  // namespace tandem::cli
