#pragma once

#include <string>
#include <string_view>

#include "common/duration.h"
#include "common/text.h"

// Why a probe failed, worded alike for every checker: the operator reads these in the log and in
// `tandem status`, and a reason that names the same cause two ways reads as two causes.
namespace tandem::resources::health {

// errno in an operator's words, lower case: "connection refused", "no route to host".
std::string errnoReason(int err);

// "timed out after 1000 ms"
std::string timedOutReason(Millis timeout);

// How much of what a real server sent a reason quotes (tandem::quote, common/text.h): a
// server's bytes go into a log line and a terminal.
inline constexpr size_t kReasonQuoteMax = 60;

}  // namespace tandem::resources::health
