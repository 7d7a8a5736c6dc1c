#pragma once

#include <string>

#include "common/duration.h"

// Why a probe failed, worded alike for every checker: the operator reads these in the log and in
// `tandem status`, and a reason that names the same cause two ways reads as two causes.
namespace tandem::resources::health {

// errno in an operator's words, lower case: "connection refused", "no route to host".
std::string errnoReason(int err);

// "timed out after 1000 ms"
std::string timedOutReason(Millis timeout);

}  // namespace tandem::resources::health
