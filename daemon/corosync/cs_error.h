#pragma once

#include <corosync/corotypes.h>

#include <string_view>

#include "common/error.h"

// Where corosync's error space ends: every cs_error_t a libcpg/libvotequorum/libcmap call
// returns is turned into tandem's Error here and nowhere else. Beware: CS_OK is 1, not 0, so
// `if (rc)` means nothing; compare with CS_OK.
namespace tandem::corosync {

// "CS_ERR_TRY_AGAIN", "CS_OK", or "CS_ERR_<n>" for a value this corosync does not define.
std::string_view csErrorName(cs_error_t rc);

ErrorCode csErrorCode(cs_error_t rc);

// Error{code, "<what>: CS_ERR_LIBRARY (2)"}.
Error csError(cs_error_t rc, std::string_view what);

// The connection to the local engine is gone (it stopped, crashed or dropped us): only a new
// connection helps.
bool csConnectionGone(cs_error_t rc);

}  // namespace tandem::corosync
