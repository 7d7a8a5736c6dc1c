#pragma once

#include <string>
#include <string_view>

#include "common/duration.h"

// Why a probe failed, worded alike for every checker: the operator reads these in the log and in
// `tandem status`, and a reason that names the same cause two ways reads as two causes.
namespace tandem::resources::health {

// errno in an operator's words, lower case: "connection refused", "no route to host".
std::string errnoReason(int err);

// "timed out after 1000 ms"
std::string timedOutReason(Millis timeout);

// What a real server sent, quoted for a reason: at most max bytes, printable ASCII as is, \", \\,
// \r, \n, \t and \xNN for the rest, "..." after a cut. A server's bytes go into a log line
// and a terminal, so nothing unprintable passes through.
std::string quotedPrefix(std::string_view bytes, size_t max = 60);

}  // namespace tandem::resources::health
